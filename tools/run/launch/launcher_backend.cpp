#include "run/launch/launcher_backend.hpp"

#include <cctype>
#include <regex>

namespace popdist::cli {
namespace {

// The first match of `pattern`'s group 1 in `text`, or nullopt.
std::optional<std::string> find_group(std::string_view text, const std::regex& pattern) {
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(text.begin(), text.end(), match, pattern)) return std::nullopt;
  return match[1].str();
}

}  // namespace

std::string_view backend_name(Backend backend) {
  switch (backend) {
    case Backend::openmpi: return "openmpi";
    case Backend::hydra: return "hydra";
    case Backend::srun: return "srun";
  }
  return "openmpi";
}

std::optional<BackendChoice> parse_backend_choice(std::string_view word) {
  if (word == "auto") return BackendChoice::automatic;
  if (word == "openmpi") return BackendChoice::openmpi;
  if (word == "hydra") return BackendChoice::hydra;
  if (word == "srun") return BackendChoice::srun;
  return std::nullopt;
}

// Open MPI 4: "mpirun (Open MPI) 4.1.4" ("mpirun.openmpi (OpenRTE) 4.1.4" by another name); 5: "mpirun (Open MPI) 5.0.x" (prterun under it says the
// same). MPICH's hydra: "HYDRA build details:" then "Version: 4.0.2". Intel MPI's hydra: "Intel(R)
// MPI Library for Linux* OS, Version 2021.x". srun: "slurm 22.05.8".
std::optional<LauncherIdentity> identify_launcher(std::string_view text) {
  static const std::regex open_mpi(R"(\((?:Open MPI|OpenRTE)\) ([0-9][0-9A-Za-z.]*))");
  static const std::regex intel(R"(Intel\(R\) MPI Library[^\n]*Version ([0-9][0-9A-Za-z.]*))");
  static const std::regex hydra_version(R"(HYDRA build details:\s*\n\s*Version:\s*([0-9][0-9A-Za-z.]*))");
  static const std::regex slurm(R"(^slurm(?:-wlm)? ([0-9][0-9A-Za-z.-]*))");
  if (auto version = find_group(text, open_mpi)) return LauncherIdentity{Backend::openmpi, "Open MPI " + *version};
  if (auto version = find_group(text, intel)) return LauncherIdentity{Backend::hydra, "Intel MPI " + *version};
  if (text.find("HYDRA build details") != std::string_view::npos) {
    return LauncherIdentity{Backend::hydra, "MPICH hydra " + find_group(text, hydra_version).value_or("(no version)")};
  }
  if (auto version = find_group(text, slurm)) return LauncherIdentity{Backend::srun, "Slurm " + *version};
  return std::nullopt;
}

std::string first_line_of(std::string_view text) {
  constexpr std::size_t kLongest = 100;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line(text.substr(start, end - start));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos) {
      line.erase(0, first);
      return line.size() > kLongest ? line.substr(0, kLongest) + "..." : line;
    }
    start = end + 1;
  }
  return "(no output)";
}

}  // namespace popdist::cli
