// Options that would lose the user's files, decide verdicts wrongly or exhaust the machine are refused
// up front: exit 2, one line `error: ...` naming the option or folder, nothing written or changed.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "fault_models.h"
#include "process_support.h"

namespace reduce {
namespace {

namespace fs = std::filesystem;
using testing::kBroadcastChain;
using testing::read_bytes;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

const char* kFaultyEngine = "opt:fault=broadcast-batch1";  // kBroadcastChain fails on it

std::set<std::string> entries(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& e : fs::recursive_directory_iterator(dir)) names.insert(fs::relative(e.path(), dir).string());
  return names;
}

// Exit 2 and exactly one line `error: ...` that names `subject`.
void expect_refused(const testing::ProcessRun& r, const std::string& subject) {
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(subject), std::string::npos) << subject << ": " << r.err;
}

struct Fixture {
  TempDir dir;
  std::string model = (dir / "model.onnxtxt").string();
  Fixture() { write_bytes(model, kBroadcastChain); }
};

// --- -o: the bundle folder -------------------------------------------------------------------

TEST(HostileOutput, TheInputModelsFolderIsRefused) {
  Fixture f;
  const auto before = entries(f.dir.path());
  for (const fs::path& out : {f.dir.path(), f.dir / ".", f.dir / "sub" / ".."}) {
    auto r = run_reduce({f.model, "--engine", kFaultyEngine, "-o", out.string()});
    expect_refused(r, out.string());
    EXPECT_NE(r.err.find("input model"), std::string::npos) << r.err;
  }
  EXPECT_EQ(entries(f.dir.path()), before);
  EXPECT_EQ(read_bytes(f.model), kBroadcastChain);
}

TEST(HostileOutput, AFolderAboveTheInputModelIsRefused) {
  Fixture f;
  const fs::path nested = f.dir / "inputs" / "m.onnxtxt";  // a bundle would replace inputs/
  fs::create_directories(nested.parent_path());
  write_bytes(nested, kBroadcastChain);
  auto r = run_reduce({nested.string(), "--engine", kFaultyEngine, "-o", f.dir.path().string()});
  expect_refused(r, f.dir.path().string());
  EXPECT_EQ(read_bytes(nested), kBroadcastChain);
  EXPECT_FALSE(fs::exists(f.dir / "model.onnx"));
}

// `-o` onto a folder that holds only `file`: refused with an error naming the folder, `file` untouched.
testing::ProcessRun expect_folder_kept(const std::string& file, const std::string& content) {
  Fixture f;
  const fs::path out = f.dir / "work";
  fs::create_directories(out);
  write_bytes(out / file, content);
  auto r = run_reduce({f.model, "--engine", kFaultyEngine, "-o", out.string()});
  expect_refused(r, out.string());
  EXPECT_EQ(read_bytes(out / file), content);
  EXPECT_EQ(entries(out), std::set<std::string>{file});
  return r;
}

TEST(HostileOutput, ANonEmptyFolderThatIsNotABundleIsRefused) {
  auto r = expect_folder_kept("notes.txt", "mine");
  EXPECT_NE(r.err.find("notes.txt"), std::string::npos) << r.err;
}

TEST(HostileOutput, AFolderWithOnlySomeonesModelOnnxIsNotABundle) {
  auto r = expect_folder_kept("model.onnx", "not mine to replace");
  EXPECT_NE(r.err.find("not a bundle"), std::string::npos) << r.err;
}

TEST(HostileOutput, AFileIsRefused) {
  Fixture f;
  auto r = run_reduce({f.model, "--engine", kFaultyEngine, "-o", f.model});
  expect_refused(r, f.model);
  EXPECT_EQ(read_bytes(f.model), kBroadcastChain);
}

TEST(HostileOutput, AnEmptyFolderAndAnEarlierBundleAreWrittenInto) {
  Fixture f;
  const fs::path out = f.dir / "out";
  fs::create_directories(out);
  auto first = run_reduce({f.model, "--engine", kFaultyEngine, "-o", out.string()});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  auto again = run_reduce({f.model, "--engine", kFaultyEngine, "-o", out.string()});
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_TRUE(fs::exists(out / "bucket.txt"));
}

TEST(HostileOutput, ResumeNeedsAJournalBeforeAnyWork) {
  Fixture f;
  const fs::path out = f.dir / "out";
  auto r = run_reduce({f.model, "--engine", kFaultyEngine, "-o", out.string(), "--resume"});
  expect_refused(r, "journal");
  EXPECT_FALSE(fs::exists(out));
}

// A journal's candidates are node sets of one model, found with one engine and verdict options:
// resuming from one of another reduction would certify a "reproducer" of nothing. Refused with one
// error line naming the journal and what differs; the journal is left as it was.
TEST(HostileOutput, ResumeRefusesAJournalOfAnotherReductionOrOfNone) {
  Fixture f;
  const fs::path out = f.dir / "out";
  ASSERT_EQ(run_reduce({f.model, "--engine", kFaultyEngine, "-o", out.string()}).exit_code, 0);
  const std::string journal = read_bytes(out / "journal");
  const std::string other = (f.dir / "other.onnxtxt").string();
  write_bytes(other, std::string(kBroadcastChain) + "\n");  // the same graph, another file
  struct Case {
    std::vector<std::string> args;
    std::string differs;
  };
  const std::vector<Case> cases = {{{other, "--engine", kFaultyEngine}, "model 'fnv1a64:"},
                                   {{f.model, "--engine", "opt"}, "engine '" + std::string(kFaultyEngine) + "' (now 'opt')"},
                                   {{f.model, "--engine", kFaultyEngine, "--atol", "0.5"}, "tolerance 'atol "}};
  const std::string where = "error: " + (out / "journal").string() + ": ";
  for (const Case& c : cases) {
    std::vector<std::string> args = c.args;
    args.insert(args.end(), {"-o", out.string(), "--resume"});
    SCOPED_TRACE(c.differs);
    auto r = run_reduce(args);
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find(where + "belongs to another reduction: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(c.differs), std::string::npos) << r.err;
    EXPECT_EQ(read_bytes(out / "journal"), journal);
  }
  // A journal that does not say what it belongs to (written before reduce recorded it) is refused too.
  std::string old_format = journal.substr(0, journal.find(",\"reduction\"")) + "}\n";
  write_bytes(out / "journal", old_format);
  auto r = run_reduce({f.model, "--engine", kFaultyEngine, "-o", out.string(), "--resume"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(where + "written by an older reduce"), std::string::npos) << r.err;
  EXPECT_EQ(read_bytes(out / "journal"), old_format);
}

// --- options that decide verdicts or resources -----------------------------------------------

// Each of these would make `check` answer wrongly or exhaust the machine; kBroadcastChain fails, so
// a wrongly accepted option shows as exit 1 (or a hang / crash) instead of 2.
struct BadOption {
  std::vector<std::string> args;
  std::string named;
};

const std::vector<BadOption> kBadCheckOptions = {
    {{"--atol", "nan"}, "--atol"},        {{"--atol", "inf"}, "--atol"},
    {{"--rtol", "nan"}, "--rtol"},        {{"--rtol", "-1"}, "--rtol"},
    {{"--timeout", "nan"}, "--timeout"},  {{"--timeout", "inf"}, "--timeout"},
    {{"--timeout", "1e10"}, "--timeout"}, {{"--timeout", "-1"}, "--timeout"},
    {{"--slots", "100000"}, "--slots"},   {{"--slots", "-1"}, "--slots"},
    {{"--threads", "100000"}, "--threads"}, {{"--threads", "-1"}, "--threads"},
    {{"--memory-budget", "inf"}, "--memory-budget"}, {{"--memory-budget", "nan"}, "--memory-budget"},
    {{"--input-range", "X:nan,1"}, "--input-range"}, {{"--input-range", "X:0,inf"}, "--input-range"},
    {{"--input-range", "X:-inf,0"}, "--input-range"}, {{"--input-range", "X:1,0"}, "--input-range"},
    {{"--confirm", "100000"}, "--confirm"}, {{"--confirm", "0"}, "--confirm"},
};

TEST(HostileOptions, CheckRefusesNonFiniteAndUnboundedValues) {
  Fixture f;
  for (const auto& bad : kBadCheckOptions) {
    std::vector<std::string> args{"check", f.model, "--engine", kFaultyEngine};
    args.insert(args.end(), bad.args.begin(), bad.args.end());
    SCOPED_TRACE(bad.args[0] + " " + bad.args[1]);
    expect_refused(run_reduce(args), bad.named);
  }
}

TEST(HostileOptions, LimitsThemselvesAreAccepted) {
  Fixture f;
  auto r = run_reduce({"check", f.model, "--engine", kFaultyEngine, "--timeout", "604800", "--slots", "1024",
                       "--threads", "1", "--atol", "0", "--input-range", "X:-1,1"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
}

TEST(HostileOptions, ReduceRefusesBadOptionsBeforeAnyWork) {
  Fixture f;
  const fs::path out = f.dir / "out";
  const std::vector<BadOption> bad_reduce = {
      {{"-j", "100000"}, "-j"},           {{"-j", "-1"}, "-j"},
      {{"--slots", "100000"}, "--slots"}, {{"--strategy", "bogus"}, "--strategy"},
      {{"--atol", "nan"}, "--atol"},      {{"--timeout", "inf"}, "--timeout"},
      {{"--rank-timeout", "0"}, "--rank-timeout"}, {{"--rank-timeout", "nan"}, "--rank-timeout"},
  };
  for (const auto& bad : bad_reduce) {
    std::vector<std::string> args{f.model, "--engine", kFaultyEngine, "-o", out.string()};
    args.insert(args.end(), bad.args.begin(), bad.args.end());
    SCOPED_TRACE(bad.args[0] + " " + bad.args[1]);
    expect_refused(run_reduce(args), bad.named);  // one line: the reference never ran
    EXPECT_FALSE(fs::exists(out));
  }
}

TEST(HostileOptions, RunAndConformanceRefuseUnboundedThreads) {
  Fixture f;
  expect_refused(run_reduce({"run", f.model, "--engine", "ref", "--threads", "100000"}), "--threads");
  expect_refused(run_reduce({"conformance", f.dir.path().string(), "--engine", "ref", "--threads", "100000"}), "--threads");
}

TEST(HostileOptions, BatchRefusesAnUnboundedJobCount) {
  Fixture f;
  const fs::path out = f.dir / "batch";
  auto r = run_reduce({"batch", f.dir.path().string(), "--engine", kFaultyEngine, "-o", out.string(), "-j", "100000"});
  expect_refused(r, "-j");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace reduce
