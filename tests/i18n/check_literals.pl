#!/usr/bin/perl
# check_literals.pl FILE... : finds user-facing text that bypasses the catalog (issue 52). A
# string literal given to a call that shows or reports text — ImGui's labels and text, Error,
# the parsers' fail(), stderr — must be inside one of translate.hpp's keywords (_, N_, tr_n,
# tr_c). Text is a literal with a word of two or more letters once ImGui's "##id" suffix, printf
# formats and escapes are removed ("%s", "##heads", "K" are not text). A line may say why a literal
# stays English with a comment holding "i18n: English" (a file format's word, a unit symbol).
# Prints FILE:LINE: the literal, for each; exit 1 when any was found.
use strict;
use warnings;

# Calls whose arguments are text, with the argument positions that are (all when absent).
my %sinks = map { $_ => undef } qw(
  Text TextWrapped TextDisabled TextColored TextUnformatted BulletText LabelText SetTooltip
  Button SmallButton Checkbox RadioButton MenuItem BeginMenu BeginTabItem CollapsingHeader
  TreeNode Selectable SliderFloat SliderFloat2 SliderInt DragFloat DragInt InputText InputInt
  InputFloat InputTextMultiline InputTextWithHint Combo BeginPopupModal Begin BeginCombo
  Error with_log fail fail_write help_marker tooltip_text caption_line);
$sinks{menu_item} = [1];
$sinks{record_tab} = [1];
$sinks{fprintf} = [1];    # fprintf(stderr, "…"): only stderr is checked below
my %keywords = map { $_ => 1 } qw(_ N_ tr_n tr_c);

my $found = 0;
for my $file (@ARGV) {
  open(my $fh, '<:raw', $file) or die "check_literals: cannot read $file\n";
  local $/;
  my $src = <$fh>;
  close $fh;
  # Lines that say a literal stays English.
  my %exempt;
  my $n = 1;
  for my $line (split /\n/, $src, -1) {
    $exempt{$n} = 1 if $line =~ m{//.*i18n: English};
    ++$n;
  }
  # Tokens: [kind, text, line]. Comments dropped; raw strings and literals kept whole.
  my @tok;
  my $line = 1;
  while ($src =~ m{\G(?:
        (?<ws>\s+)
      | (?<com>//[^\n]*|/\*.*?\*/)
      | (?<raw>(?:u8|u|U|L)?R"(?<d>[^(\s]*)\(.*?\)\k<d>")
      | (?<str>(?:u8|u|U|L)?"(?:\\.|[^"\\\n])*")
      | (?<chr>'(?:\\.|[^'\\\n])+')
      | (?<id>[A-Za-z_][A-Za-z_0-9]*)
      | (?<num>[0-9][0-9A-Za-z_.']*)
      | (?<p>.)
    )}gsx) {
    my $text = $&;
    my $at = $line;
    $line += ($text =~ tr/\n//);
    next if defined $+{ws} || defined $+{com};
    if (defined $+{raw} || defined $+{str}) { push @tok, ['s', $text, $at]; next; }
    if (defined $+{id}) { push @tok, ['i', $text, $at]; next; }
    push @tok, ['p', $text, $at];
  }
  # Walk calls: a stack of [name, argument index, is-sink-arg-list].
  my @stack;
  for (my $i = 0; $i < @tok; ++$i) {
    my ($k, $t, $l) = @{$tok[$i]};
    if ($k eq 'p' && $t eq '(') {
      my $name = ($i > 0 && $tok[$i - 1][0] eq 'i') ? $tok[$i - 1][1] : '';
      push @stack, [$name, 0];
      next;
    }
    if ($k eq 'p' && $t eq ')') { pop @stack; next; }
    if ($k eq 'p' && $t eq ',' && @stack) { ++$stack[-1][1]; next; }
    next unless $k eq 's';
    next unless @stack;
    # The innermost keyword or sink around this literal decides.
    my $verdict = '';
    for (my $s = $#stack; $s >= 0; --$s) {
      my ($name, $arg) = @{$stack[$s]};
      if ($keywords{$name}) { $verdict = 'ok'; last; }
      if (exists $sinks{$name}) {
        my $only = $sinks{$name};
        if ($name eq 'fprintf') {
          my $first = $tok[$i]; # fprintf(stderr, …) only
          my $j = $i; --$j while $j > 0 && !($tok[$j][0] eq 'i' && $tok[$j][1] eq 'fprintf');
          $verdict = ($j + 2 < @tok && $tok[$j + 2][1] eq 'stderr' && $arg == 1) ? 'bad' : 'ok';
          last;
        }
        if (!$only || grep { $_ == $arg } @$only) { $verdict = 'bad'; }
        else { $verdict = 'ok'; }
        last;
      }
    }
    next unless $verdict eq 'bad';
    next if $exempt{$l};
    my $body = $t;
    $body =~ s/^(?:u8|u|U|L)?R?"//;
    $body =~ s/"$//;
    $body =~ s/##.*//s;
    $body =~ s/\\[ntr"\\]/ /g;
    $body =~ s/%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t|L)?[diouxXeEfFgGaAcsp%]/ /g;
    next unless $body =~ /[A-Za-z]{2,}/;
    print "$file:$l: $t\n";
    $found = 1;
  }
}
exit $found;
