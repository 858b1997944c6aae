// What a launch makes `reduce` and `reduce batch` do (alone, join, refuse) and the lines of the
// rank-0-lost and refusal policies, called on the library: no binary, no MPI job.
#include <gtest/gtest.h>

#include <cstdlib>

#include "cluster/mpi_launch.h"

namespace reduce::cluster {
namespace {

MpiLaunch launched(int size, int rank) { return {true, size, rank, 0}; }

TEST(JobPlan, AProcessNotUnderALauncherOrAloneInItsJobReducesAlone) {
  EXPECT_EQ(job_plan(MpiLaunch{}, true), JobPlan::Alone);
  EXPECT_EQ(job_plan(MpiLaunch{}, false), JobPlan::Alone);
  EXPECT_EQ(job_plan(launched(1, 0), false), JobPlan::Alone) << "srun -n 1 is no job";
}

TEST(JobPlan, SeveralCopiesJoinWithMpiAndAreRefusedWithout) {
  EXPECT_EQ(job_plan(launched(3, 1), true), JobPlan::Join);
  EXPECT_EQ(job_plan(launched(3, 1), false), JobPlan::Refuse);
  // A launcher that names a rank but no size is still several copies for all we know.
  EXPECT_EQ(job_plan(launched(0, 2), false), JobPlan::Refuse);
}

TEST(JobPlan, OnlyRankZeroSaysWhyItRefuses) {
  const std::string line = refusal_line(launched(3, 0));
  EXPECT_NE(line.find("built without MPI"), std::string::npos) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos) << "one line";
  EXPECT_EQ(refusal_line(launched(3, 2)), "");
}

TEST(RankZeroLost, TheWorkersLineNamesItsRankTheTimeoutAndWhatStopped) {
  const std::string line = rank_zero_lost_line(2, std::chrono::milliseconds(1500), "its checks were stopped");
  EXPECT_EQ(line, "error: rank 2: nothing from rank 0 for 1500 ms (--rank-timeout); its checks were stopped");
}

TEST(RankTimeout, OutsideATenthOfASecondToAnHourIsAnErrorNamingTheFlag) {
  EXPECT_TRUE(check_rank_timeout(0.1).ok());
  EXPECT_TRUE(check_rank_timeout(3600).ok());
  const Status low = check_rank_timeout(0.05);
  ASSERT_FALSE(low.ok());
  EXPECT_NE(low.error().message().find("--rank-timeout"), std::string::npos) << low.error().message();
  EXPECT_FALSE(check_rank_timeout(3601).ok());
}

TEST(MpiLaunch, RanksComeFromTheLaunchersEnvironmentAndFillSlotEnvironments) {
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "1", 1);
  const MpiLaunch launch = mpi_launch_from_environment();
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("OMPI_COMM_WORLD_RANK");
  unsetenv("OMPI_COMM_WORLD_LOCAL_RANK");
  EXPECT_TRUE(launch.under_mpi);
  EXPECT_EQ(launch.size, 4);
  EXPECT_EQ(launch.rank, 3);
  EXPECT_EQ(launch.local_rank, 1);
  std::vector<std::string> env{"CUDA_VISIBLE_DEVICES={local_rank}", "LOG=rank{rank}-{rank}.txt"};
  substitute_rank(env, launch);
  EXPECT_EQ(env[0], "CUDA_VISIBLE_DEVICES=1");
  EXPECT_EQ(env[1], "LOG=rank3-3.txt");
}

}  // namespace
}  // namespace reduce::cluster
