// Command templates: shell-like splitting without a shell; placeholders never re-split or interpreted.
#include <gtest/gtest.h>

#include "adapters/command_template.h"
#include "adapters/process.h"

namespace reduce {
namespace {

using Tokens = std::vector<std::string>;

Tokens split(const std::string& text) {
  auto r = split_command_template(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? *r : Tokens{};
}

TEST(CommandTemplate, SplitsOnWhitespace) {
  EXPECT_EQ(split("  run  {model}\t--x 1 "), (Tokens{"run", "{model}", "--x", "1"}));
}

TEST(CommandTemplate, QuotesKeepSpacesAndBackslashesEscape) {
  EXPECT_EQ(split(R"(a 'b c' "d \"e\" f" g\ h 'it''s' "x\y")"),
            (Tokens{"a", "b c", R"(d "e" f)", "g h", "its", R"(x\y)"}));
  EXPECT_EQ(split("'' x"), (Tokens{"", "x"}));
}

TEST(CommandTemplate, MalformedTemplatesAreErrors) {
  for (const char* bad : {"run 'model", "run \"model", "run model\\", "", "   "}) {
    auto r = split_command_template(bad);
    EXPECT_FALSE(r.ok()) << bad;
  }
  EXPECT_NE(split_command_template("a 'b").error().what.find("unterminated single quote"), std::string::npos);
}

TEST(CommandTemplate, PlaceholdersAreReplacedWholeOrInsideAToken) {
  const Placeholders p{{"model", "/m.onnx"}, {"slot", "2"}};
  EXPECT_EQ(fill_placeholders(Tokens{"{model}", "--model={model}", "{other}", "{", "{slot}{slot}"}, p),
            (Tokens{"/m.onnx", "--model=/m.onnx", "{other}", "{", "22"}));
  EXPECT_EQ(fill_placeholders("CUDA_VISIBLE_DEVICES={slot}", p), "CUDA_VISIBLE_DEVICES=2");
}

TEST(CommandTemplate, AValueWithShellSyntaxArrivesAsOneIntactArgument) {
  const std::string nasty = "/tmp/a b; echo pwned $(id) `id` \"q\" 'x' | > * \\ {inputs}";
  const Tokens argv = fill_placeholders(split("printf '[%s]\\n' {model} {inputs}"), {{"model", nasty}, {"inputs", "i"}});
  ASSERT_EQ(argv.size(), 4u);
  EXPECT_EQ(argv[2], nasty);
  auto r = run_process(argv);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->output, "[" + nasty + "]\n[i]\n");
}

}  // namespace
}  // namespace reduce
