// The CPU path's threads (core/vit/vit_kernels.hpp, issue 49): the calling thread's team runs
// every task exactly once on the worker the contract names, call after call with any count of
// threads (fewer than the team has included), from several calling threads at once; the even
// splits cover their range once, in parts within one granule of each other.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/vit/vit_kernels.hpp"

using namespace attnlab;

namespace {

// Runs `tasks` tasks on `threads` threads and checks each ran once, on worker t mod threads.
void expect_each_task_once(int tasks, int threads) {
  std::vector<std::atomic<int>> runs(static_cast<std::size_t>(tasks));
  std::vector<int> worker_of(static_cast<std::size_t>(tasks), -1);
  vit_kernels::parallel_tasks(tasks, threads, [&](int t, int w) {
    runs[static_cast<std::size_t>(t)].fetch_add(1);
    worker_of[static_cast<std::size_t>(t)] = w;
  });
  const int used = std::max(1, std::min(threads, tasks));
  for (int t = 0; t < tasks; ++t) {
    ASSERT_EQ(runs[static_cast<std::size_t>(t)].load(), 1) << "task " << t << " of " << tasks << " on " << threads << " threads";
    ASSERT_EQ(worker_of[static_cast<std::size_t>(t)], t % used) << "task " << t;
  }
}

}  // namespace

TEST(VitKernels, TheTeamRunsEveryTaskOnceCallAfterCall) {
  // Growing, shrinking (the idle workers must run nothing) and growing again, many times over:
  // a worker that kept the last call's tasks would run one twice or leave one out.
  for (int round = 0; round < 200; ++round)
    for (const int threads : {2, 5, 3, 1, 8, 2})
      for (const int tasks : {1, 2, 7, 64}) expect_each_task_once(tasks, threads);
}

TEST(VitKernels, CallingThreadsEachHaveTheirOwnTeam) {
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 3; ++c)
    callers.emplace_back([&, c] {
      for (int round = 0; round < 300; ++round) {
        std::vector<std::atomic<int>> runs(50);
        vit_kernels::parallel_tasks(50, 2 + c, [&](int t, int) { runs[static_cast<std::size_t>(t)].fetch_add(1); });
        for (const auto& r : runs)
          if (r.load() != 1) failures.fetch_add(1);
      }
    });
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST(VitKernels, EvenSplitsCoverTheRangeOnceInPartsWithinAGranule) {
  for (const int count : {1, 5, 16, 17, 197, 384, 1152, 1536})
    for (const int threads : {1, 2, 3, 16})
      for (const int granule : {1, 16}) {
        std::vector<std::atomic<int>> covered(static_cast<std::size_t>(count));
        std::atomic<int> parts{0};
        std::vector<std::pair<int, int>> ranges(static_cast<std::size_t>(threads), {0, 0});
        vit_kernels::parallel_ranges(count, threads, granule, [&](int first, int size) {
          for (int i = first; i < first + size; ++i) covered[static_cast<std::size_t>(i)].fetch_add(1);
          ranges[static_cast<std::size_t>(parts.fetch_add(1))] = {first, size};
        });
        for (int i = 0; i < count; ++i) ASSERT_EQ(covered[static_cast<std::size_t>(i)].load(), 1) << count << " " << threads << " " << granule;
        int smallest = count, largest = 0;
        for (int p = 0; p < parts.load(); ++p) {
          const auto [first, size] = ranges[static_cast<std::size_t>(p)];
          EXPECT_EQ(first % granule, 0) << "a part starts inside a granule";
          if (first + size < count) {  // the last part alone may end short
            smallest = std::min(smallest, size);
          }
          largest = std::max(largest, size);
        }
        EXPECT_LE(parts.load(), threads);
        if (parts.load() > 1) {
          EXPECT_LE(largest - smallest, granule) << count << " on " << threads << " in granules of " << granule;
        }
      }
  // T = 197 on 2 threads: 99 and 98 rows, not 104 and 93.
  std::vector<int> sizes(2, 0);
  vit_kernels::parallel_rows(197, 2, [&](int first, int size) { sizes[first == 0 ? 0 : 1] = size; });
  EXPECT_EQ(sizes, (std::vector<int>{99, 98}));
}

TEST(VitKernels, QueryBlocksSplitTheTokensEvenlyAmongTheThreads) {
  // T = 197 on 2 threads in blocks of at most 64: 4 blocks of 50 (the last 47), 100 and 97 rows a
  // thread where blocks of 64 gave 128 and 69.
  EXPECT_EQ(vit_kernels::even_block_rows(197, 2, 64), 50);
  for (const int T : {1, 5, 50, 197, 785, 3601})
    for (const int threads : {1, 2, 4, 16}) {
      const int rows = vit_kernels::even_block_rows(T, threads, 64);
      ASSERT_GE(rows, 1);
      EXPECT_LE(rows, 64) << T << " on " << threads;
      const int blocks = (T + rows - 1) / rows;
      std::vector<int> per_thread(static_cast<std::size_t>(threads), 0);
      for (int b = 0; b < blocks; ++b) per_thread[static_cast<std::size_t>(b % threads)] += std::min(rows, T - b * rows);
      const auto [lo, hi] = std::minmax_element(per_thread.begin(), per_thread.end());
      if (blocks >= threads) {
        EXPECT_LE(*hi - *lo, rows) << T << " tokens on " << threads << " threads: one thread waits for another's block";
      }
    }
}

TEST(VitKernels, ATasksExceptionComesBackToTheCallerAndTheTeamLivesOn) {
  for (const int thrower : {0, 1, 3}) {  // the caller's own task, then workers'
    std::atomic<int> ran{0};
    EXPECT_THROW(vit_kernels::parallel_tasks(8, 4,
                                             [&](int t, int) {
                                               ran.fetch_add(1);
                                               if (t == thrower) throw std::runtime_error("task " + std::to_string(t));
                                             }),
                 std::runtime_error);
    EXPECT_EQ(ran.load(), 7) << "the thrower's next task (t + 4) is skipped; the other workers run theirs";
    expect_each_task_once(64, 4);  // the same team, afterwards
  }
}
