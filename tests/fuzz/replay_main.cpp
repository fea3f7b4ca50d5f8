// A main() for the harnesses where libFuzzer is not available (GCC builds): runs the harness
// once on every file of the given directories, so that the seed corpora and every kept finding
// are regression tests in any build. With clang, libFuzzer's own main does this and fuzzes.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    for (const auto& entry : std::filesystem::directory_iterator(argv[i])) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::vector<char> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      std::fprintf(stderr, "replay %s (%zu bytes)\n", entry.path().c_str(), bytes.size());
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
      ++files;
    }
  }
  std::printf("%d inputs replayed without a finding\n", files);
  return files > 0 ? 0 : 1;  // an empty corpus means a wrong path, not a pass
}
