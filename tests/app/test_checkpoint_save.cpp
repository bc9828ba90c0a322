// Issue 38: a checkpoint save that fails leaves nothing, and a retry works; the files are never
// written through a fixed temporary name that a link could redirect.
#include "app/commands/train_files.hpp"
#include "core/base/error.hpp"
#include "core/io/safetensors_write.hpp"
#include "core/vit/vit.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <fstream>

#include <sys/resource.h>
#include <unistd.h>

using namespace attnlab;
using namespace attnlab::app;
namespace fs = std::filesystem;

namespace {

VitTrainer tiny_trainer() {
  const VitTrainShape shape{.image_rows = 28, .image_cols = 28, .patch = 7, .D = 16, .depth = 2, .heads = 2,
                            .mlp_hidden = 32};
  return VitTrainer(shape, VitTrainSettings{}, 1, 1);
}

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("attnlab-save-" + std::to_string(::getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Files may grow to `bytes` only (RLIMIT_FSIZE, SIGXFSZ ignored: write() fails with EFBIG, as on
// a full disk) while it lives.
struct FileSizeLimit {
  rlimit old{};
  explicit FileSizeLimit(rlim_t bytes) {
    ::getrlimit(RLIMIT_FSIZE, &old);
    std::signal(SIGXFSZ, SIG_IGN);
    rlimit now = old;
    now.rlim_cur = bytes;
    ::setrlimit(RLIMIT_FSIZE, &now);
  }
  ~FileSizeLimit() { ::setrlimit(RLIMIT_FSIZE, &old); }
};

}  // namespace

// Before issue 38 the folder was made first and the files moved in one by one: a save that
// failed (here the model file cannot grow past 4 KiB) left a half folder, and the retry was
// refused ("… exists: choose another folder"). Now the folder appears whole or not at all.
TEST(CheckpointSave, AFailedSaveLeavesNothingAndARetryWorks) {
  const VitTrainer trainer = tiny_trainer();
  const fs::path parent = fresh_dir("failed"), dir = parent / "run";
  const std::array<float, 3> mean{0.5f, 0.5f, 0.5f}, sd{0.25f, 0.25f, 0.25f};
  const std::vector<std::string> labels{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  const std::string refusal = dir.string() + " exists: choose another folder";
  prepare_checkpoint_folder(dir, false, refusal);
  {
    FileSizeLimit limit(4096);
    EXPECT_THROW(write_train_checkpoint(dir, trainer, "step\n", mean, sd, labels), Error);
  }
  EXPECT_FALSE(fs::exists(dir)) << "a failed save left a folder";
  for (const auto& e : fs::directory_iterator(parent)) ADD_FAILURE() << "left behind: " << e.path();
  // The retry, as the Save button does it again.
  ASSERT_NO_THROW(prepare_checkpoint_folder(dir, false, refusal));
  ASSERT_NO_THROW(write_train_checkpoint(dir, trainer, "step\n", mean, sd, labels));
  EXPECT_EQ(load_vit(dir).arch.depth, 2);
  for (const auto& e : fs::directory_iterator(parent)) EXPECT_EQ(e.path(), dir);
  // A second save into it is refused without --force, and with it replaces the three files.
  EXPECT_THROW(prepare_checkpoint_folder(dir, false, refusal), Error);
  std::ofstream(dir / "notes.txt") << "mine";
  ASSERT_NO_THROW(prepare_checkpoint_folder(dir, true));
  ASSERT_NO_THROW(write_train_checkpoint(dir, trainer, "step\n1\n", mean, sd, labels));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  // A folder named with a trailing separator is made whole too.
  const fs::path slash = parent / "run2" / "";
  ASSERT_NO_THROW(prepare_checkpoint_folder(slash, false, refusal));
  EXPECT_FALSE(fs::exists(parent / "run2")) << "made before the save";
  ASSERT_NO_THROW(write_train_checkpoint(slash, trainer, "step\n", mean, sd, labels));
  EXPECT_TRUE(fs::exists(parent / "run2" / "model.safetensors"));
  fs::remove_all(parent);
}

// Before issue 38 a checkpoint went through the fixed name <path>.partial, opened with
// truncation: a link of that name sent the model into the file it pointed to.
TEST(CheckpointSave, ALinkAtTheOldTemporaryNameIsNotFollowed) {
  const VitTrainer trainer = tiny_trainer();
  const fs::path dir = fresh_dir("link");
  std::ofstream(dir / "victim.txt") << "keep me";
  fs::create_symlink(dir / "victim.txt", dir / "model.safetensors.partial");
  write_safetensors(dir / "model.safetensors", trainer.tensors());
  std::ifstream in(dir / "victim.txt");
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "keep me");
  EXPECT_FALSE(fs::is_symlink(dir / "model.safetensors"));
  fs::remove_all(dir.parent_path());
}
