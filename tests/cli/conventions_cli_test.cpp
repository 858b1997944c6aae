// Issue 68, the command line as a newcomer meets it: a misspelt command, option, engine or fault gets
// "did you mean", `reduce help CMD`, --engine asked for where the reference alone means nothing,
// --json parsed by a JSON reader, report.json's schema, PNG pictures beside the SVG, the random
// inputs said, and an interrupted reduction that says how to continue and is not silently redone.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "process_support.h"

namespace reduce {
namespace {

using testing::read_bytes;
using testing::run_process;
using testing::run_reduce;
using testing::TempDir;
using testing::write_bytes;

namespace fs = std::filesystem;

const std::string kExamples = std::string(REDUCE_SOURCE_DIR) + "/corpus/examples/";
const std::string kBroadcast = kExamples + "broadcast_batch1_cnn_50.onnx";
const std::string kBroadcastEngine = "opt:fault=broadcast-batch1";

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(Conventions, AMisspeltCommandOptionEngineOrFaultGetsTheNearestOne) {
  auto command = run_reduce({"chek", kBroadcast});
  EXPECT_EQ(command.exit_code, 2);
  EXPECT_TRUE(has(command.err, "unknown command 'chek' (did you mean 'check'?)")) << command.err;
  auto option = run_reduce({"check", kBroadcast, "--enigne", kBroadcastEngine});
  EXPECT_EQ(option.exit_code, 2);
  EXPECT_TRUE(has(option.err, "(did you mean '--engine'?)")) << option.err;
  EXPECT_EQ(lines(option.err), 1u) << option.err;
  auto other_name = run_reduce({"check", kBroadcast, "--engine", "tensorrt:fp16"});
  EXPECT_EQ(other_name.exit_code, 2);
  EXPECT_TRUE(has(other_name.err, "unknown engine 'tensorrt' (did you mean 'trt'?)")) << other_name.err;
  auto fault = run_reduce({"check", kBroadcast, "--engine", "opt:fault=brodcast-batch1"});
  EXPECT_EQ(fault.exit_code, 2);
  EXPECT_TRUE(has(fault.err, "unknown fault 'brodcast-batch1' (did you mean 'broadcast-batch1'?)")) << fault.err;
  // Far from every word: no guess.
  auto far = run_reduce({"zzzzzz"});
  EXPECT_EQ(far.exit_code, 2);
  EXPECT_FALSE(has(far.err, "did you mean")) << far.err;
}

TEST(Conventions, HelpCommandIsTheCommandsOwnHelp) {
  for (const char* command : {"check", "compare", "precision", "batch", "run", "info"}) {
    auto help = run_reduce({"help", command});
    auto own = run_reduce({command, "--help"});
    EXPECT_EQ(help.exit_code, 0) << command << help.err;
    EXPECT_EQ(help.out, own.out) << command;
    EXPECT_TRUE(has(help.out, std::string("reduce ") + command)) << command << help.out;
  }
  auto reduce_help = run_reduce({"help", "reduce"});
  EXPECT_EQ(reduce_help.exit_code, 0) << reduce_help.err;
  EXPECT_TRUE(has(reduce_help.out, "usage: reduce MODEL.onnx --engine SPEC")) << reduce_help.out;
}

TEST(Conventions, WithoutAnEngineTheCommandAsksForOneInsteadOfComparingTheReferenceWithItself) {
  TempDir dir;
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"check", kBroadcast}, {kBroadcast, "-o", (dir / "b").string()}, {"compare", kBroadcast},
        {"precision", kBroadcast, "-o", (dir / "p").string()}}) {
    auto r = run_reduce(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_TRUE(has(r.err, "--engine: name the engine under test")) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "b")) << "nothing written";
  // Expected values from elsewhere make the reference engine a test of its own.
  auto other_reference = run_reduce({"check", kBroadcast, "--reference", kBroadcastEngine});
  EXPECT_EQ(other_reference.exit_code, 1) << other_reference.out << other_reference.err;
}

TEST(Conventions, CheckJsonIsOneDocumentWithTheVerdict) {
  auto r = run_reduce({"check", kBroadcast, "--engine", kBroadcastEngine, "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << "stdout is exactly one JSON document:\n" << r.out;
  EXPECT_EQ(doc.at("schema"), 1);
  EXPECT_EQ(doc.at("command"), "check");
  EXPECT_EQ(doc.at("engine"), kBroadcastEngine);
  EXPECT_EQ(doc.at("verdict").at("verdict"), "fail");
  EXPECT_EQ(doc.at("verdict").at("kind"), "mismatch");
  EXPECT_FALSE(doc.at("verdict").at("outputs").empty());
  EXPECT_EQ(doc.at("exit_code"), r.exit_code);
  auto passes = run_reduce({"check", kBroadcast, "--engine", "opt", "--json"});
  EXPECT_EQ(passes.exit_code, 0) << passes.err;
  EXPECT_EQ(nlohmann::json::parse(passes.out).at("verdict").at("verdict"), "pass");
}

TEST(Conventions, CompareRunAndInfoJsonAreOneDocumentEach) {
  auto compare = run_reduce({"compare", kBroadcast, "--engine", kBroadcastEngine, "--json", "--local-runs", "5"});
  EXPECT_EQ(compare.exit_code, 1) << compare.err;
  const auto c = nlohmann::json::parse(compare.out, nullptr, false);
  ASSERT_FALSE(c.is_discarded()) << compare.out;
  EXPECT_EQ(c.at("command"), "compare");
  EXPECT_EQ(c.at("verdict").at("verdict"), "fail");
  EXPECT_FALSE(c.at("layers").at("values").empty());
  EXPECT_EQ(c.at("exit_code"), 1);
  auto run = run_reduce({"run", kBroadcast, "--engine", "opt", "--json", "--repeat", "2"});
  EXPECT_EQ(run.exit_code, 0) << run.err;
  const auto r = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(r.is_discarded()) << run.out;
  EXPECT_EQ(r.at("command"), "run");
  ASSERT_EQ(r.at("samples").size(), 1u);
  EXPECT_EQ(r.at("samples")[0].at("seconds").at("runs"), 2);
  EXPECT_FALSE(r.at("samples")[0].at("outputs").empty());
  EXPECT_EQ(r.at("samples")[0].at("outputs")[0].at("dtype"), "float");
  auto info = run_reduce({"info", kBroadcast, "--json"});
  EXPECT_EQ(info.exit_code, 0) << info.err;
  const auto i = nlohmann::json::parse(info.out, nullptr, false);
  ASSERT_FALSE(i.is_discarded()) << info.out;
  EXPECT_EQ(i.at("nodes"), 50);
  EXPECT_TRUE(i.at("op_types").contains("Mul"));
  auto missing = run_reduce({"info", "/nonexistent.onnx", "--json"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_TRUE(missing.out.empty()) << "a usage error prints no document: " << missing.out;
}

TEST(Conventions, HelpIsInSectionsWithPlainDefaults) {
  const std::string help = run_reduce({"help", "check"}).out;
  for (const char* section : {"engine (", "tolerance (", "input ("}) EXPECT_TRUE(has(help, std::string("\n") + section)) << section;
  EXPECT_TRUE(has(help, "(=0.99)")) << "not 0.98999999999999999";
  EXPECT_LT(help.find("\nengine ("), help.find("\ntolerance (")) << help;
}

TEST(Conventions, RandomInputsAreSaidWithWhatToPassInstead) {
  auto r = run_reduce({"check", kBroadcast, "--engine", kBroadcastEngine});
  EXPECT_TRUE(has(r.out, "inputs: random (seed 0)")) << r.out;
  EXPECT_TRUE(has(r.out, "--inputs FILE gives real data")) << r.out;
}

// A PNG a reader can decode: the signature, an IHDR of a sane size, and the IEND chunk at the end.
std::pair<uint32_t, uint32_t> png_size(const fs::path& file) {
  const std::string b = read_bytes(file);
  if (b.size() < 45 || b.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 || b.compare(12, 4, "IHDR") != 0 ||
      b.compare(b.size() - 8, 4, "IEND") != 0)
    return {0, 0};
  const auto u32 = [&](size_t at) {
    return (uint32_t(uint8_t(b[at])) << 24) | (uint32_t(uint8_t(b[at + 1])) << 16) | (uint32_t(uint8_t(b[at + 2])) << 8) |
           uint32_t(uint8_t(b[at + 3]));
  };
  return {u32(16), u32(20)};
}

TEST(Conventions, ABundleHasPngPicturesBesideTheSvgAndReportJsonASchema) {
  if (!testing::program_in_path("dot") || !testing::program_in_path("gnuplot"))
    GTEST_SKIP() << "Graphviz and gnuplot draw the pictures (scripts/setup.sh installs them)";
  TempDir dir;
  auto r = run_reduce({kBroadcast, "--engine", kBroadcastEngine, "-o", (dir / "b").string()});
  ASSERT_TRUE(testing::bundle_written(r)) << r.out << r.err;
  for (const char* picture : {"graph.png", "error.png"}) {
    const auto [width, height] = png_size(dir / "b" / picture);
    EXPECT_GE(width, 100u) << picture;
    EXPECT_GE(height, 100u) << picture;
    EXPECT_LE(width, 20000u) << picture;
    EXPECT_TRUE(fs::exists(dir / "b" / fs::path(picture).replace_extension(".svg"))) << picture;
  }
  const std::string md = read_bytes(dir / "b" / "report.md");
  EXPECT_TRUE(has(md, "(graph.png)")) << "report.md shows the PNG";
  EXPECT_TRUE(has(md, "(error.png)")) << "report.md shows the PNG";
  const auto report = nlohmann::ordered_json::parse(read_bytes(dir / "b" / "report.json"));
  EXPECT_EQ(report.begin().key(), "schema");
  EXPECT_EQ(report.at("schema"), 1);
}

TEST(Conventions, ChartTakesTheFormatItsExtensionNames) {
  if (!testing::program_in_path("gnuplot")) GTEST_SKIP() << "gnuplot draws the chart";
  TempDir dir;
  auto png = run_reduce({"compare", kBroadcast, "--engine", kBroadcastEngine, "--chart", (dir / "c.png").string()});
  EXPECT_EQ(png.exit_code, 1) << png.err;
  EXPECT_GT(png_size(dir / "c.png").first, 0u) << "a PNG, not SVG under a .png name";
  auto upper = run_reduce({"compare", kBroadcast, "--engine", kBroadcastEngine, "--chart", (dir / "C.PNG").string()});
  EXPECT_EQ(upper.exit_code, 1) << upper.err;
  EXPECT_GT(png_size(dir / "C.PNG").first, 0u) << "the extension in any case";
  auto bad = run_reduce({"compare", kBroadcast, "--engine", kBroadcastEngine, "--chart", (dir / "c.jpg").string()});
  EXPECT_EQ(bad.exit_code, 2) << bad.out << bad.err;
  EXPECT_TRUE(has(bad.err, ".svg or .png")) << bad.err;
  EXPECT_FALSE(fs::exists(dir / "c.jpg"));
}

// The check script stops its own `reduce` (SIGINT to its parent) on its sixth run (after the original and the probes): an event, not a time.
TEST(Conventions, AnInterruptedReductionSaysHowToContinueAndARerunSaysItStartsOver) {
  TempDir dir;
  const fs::path script = dir / "check.sh", count = dir / "count", stopped = dir / "stopped";
  // Runs may overlap (probes beside a check): the count may lose a step, but the stop is sent once
  // (mkdir is atomic), from the sixth run on.
  write_bytes(script, "#!/bin/sh\nn=$(cat '" + count.string() + "' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '" +
                          count.string() + "'\nif [ $n -ge 6 ] && mkdir '" + stopped.string() +
                          "' 2>/dev/null; then kill -INT $PPID; fi\ngrep -q Mul \"$1\" && exit 1\nexit 0\n");
  fs::permissions(script, fs::perms::owner_all);
  const std::string engine = "check:" + script.string() + " {model}";
  const std::string out = (dir / "bug").string();
  auto first = run_reduce({kBroadcast, "--engine", engine, "-o", out, "-j", "1"});
  ASSERT_EQ(first.exit_code, 130) << first.out << first.err;
  EXPECT_TRUE(has(first.err, "continue with: reduce " + kBroadcast)) << first.err;
  EXPECT_TRUE(has(first.err, " --resume\n")) << first.err;
  // The command as printed (shell words, its --engine and --output included) continues the reduction.
  const size_t at = first.err.find("continue with: reduce ");
  ASSERT_NE(at, std::string::npos);
  const size_t begin = at + std::string("continue with: reduce").size();
  const std::string printed = first.err.substr(begin, first.err.find('\n', begin) - begin);
  // No more interrupts: the stop was sent.
  auto resumed = run_process({"bash", "-c", "exec \"$0\" " + printed, std::string(REDUCE_BINARY_DIR) + "/reduce"});
  EXPECT_TRUE(testing::bundle_written(resumed)) << printed << "\n" << resumed.err;
  EXPECT_TRUE(has(resumed.err, "resuming from")) << resumed.err;
  // Interrupted again, then run without --resume: it starts over, and says so.
  write_bytes(count, "0\n");
  fs::remove(stopped);
  ASSERT_EQ(run_reduce({kBroadcast, "--engine", engine, "-o", out, "-j", "1"}).exit_code, 130);
  auto again = run_reduce({kBroadcast, "--engine", engine, "-o", out, "-j", "1"});
  EXPECT_TRUE(testing::bundle_written(again)) << again.err;
  EXPECT_TRUE(has(again.err, "holds an interrupted reduction of this model")) << again.err;
  EXPECT_TRUE(has(again.err, "pass --resume to continue from it")) << again.err;
  auto third = run_reduce({kBroadcast, "--engine", engine, "-o", out, "-j", "1"});
  EXPECT_TRUE(testing::bundle_written(third)) << third.err;
  EXPECT_FALSE(has(third.err, "interrupted reduction")) << "a finished bundle is not called interrupted";
}

}  // namespace
}  // namespace reduce
