// Splitting --mpi-global-args/--mpi-local-args like a shell, and quoting the printed command.
#include <catch2/catch.hpp>

#include "popdist/error.hpp"
#include "run/launch/shell_words.hpp"

using popdist::cli::shell_join;
using popdist::cli::shell_quote;
using popdist::cli::split_shell_words;
using Words = std::vector<std::string>;

TEST_CASE("split_shell_words splits as sh does (no expansion)", "[shell]") {
  CHECK(split_shell_words("", "o").empty());
  CHECK(split_shell_words("   ", "o").empty());
  CHECK(split_shell_words("--mca btl_tcp_if_include eth0", "o") == Words{"--mca", "btl_tcp_if_include", "eth0"});
  CHECK(split_shell_words("  -x  A=1\t-x B ", "o") == Words{"-x", "A=1", "-x", "B"});
  CHECK(split_shell_words("-x 'A=a b' -x \"B=c d\"", "o") == Words{"-x", "A=a b", "-x", "B=c d"});
  CHECK(split_shell_words("a\\ b c", "o") == Words{"a b", "c"});
  CHECK(split_shell_words("\"q\\\"uote\" 'it'\\''s'", "o") == Words{"q\"uote", "it's"});
  CHECK(split_shell_words("\"\\n stays\"", "o") == Words{"\\n stays"});
  CHECK(split_shell_words("'' x", "o") == Words{"", "x"});
  CHECK(split_shell_words("$HOME", "o") == Words{"$HOME"});
}

TEST_CASE("split_shell_words rejects unbalanced quoting, naming the option", "[shell]") {
  using Catch::Matchers::Contains;
  CHECK_THROWS_WITH(split_shell_words("-x 'A", "--mpi-global-args"),
                    Contains("--mpi-global-args '-x \\'A'") && Contains("unterminated single quote"));
  CHECK_THROWS_WITH(split_shell_words("-x \"A", "--mpi-local-args"), Contains("unterminated double quote"));
  CHECK_THROWS_WITH(split_shell_words("a\\", "o"), Contains("trailing backslash"));
}

TEST_CASE("shell_quote round-trips through split_shell_words", "[shell]") {
  CHECK(shell_quote("plain-word_1.2/x=y:z,^cm") == "plain-word_1.2/x=y:z,^cm");
  CHECK(shell_quote("") == "''");
  CHECK(shell_quote("a b") == "'a b'");
  CHECK(shell_quote("it's") == "'it'\\''s'");
  const Words words{"sh", "-c", "exec \"$@\" >/dev/null 2>&1", "it's", "", "$HOME", "a\tb"};
  CHECK(split_shell_words(shell_join(words), "o") == words);
}
