#include "run/plan/machine_context.hpp"

#include <unistd.h>

#include <filesystem>
#include <system_error>

#include "job/local_cores.hpp"

namespace popdist::cli {
namespace {

/// The hook's folder beside `self`; empty when it is not there.
std::string python_startup_directory(const std::string& self) {
  const auto directory =
      std::filesystem::path(self).parent_path().parent_path() / "share" / "popdist" / "python-startup";
  std::error_code error;
  return std::filesystem::exists(directory / "sitecustomize.py", error) ? directory.lexically_normal().string() : "";
}

}  // namespace

std::string self_path() {
  char self[4096];
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  return length > 0 ? std::string(self, static_cast<std::size_t>(length)) : std::string();
}

MpirunContext machine_context(const EnvLookup& env, const std::string& self) {
  MpirunContext context;
  context.as_root = ::geteuid() == 0;
  context.omp_threads = !env("OMP_NUM_THREADS");
  context.env_binding = env("OMPI_MCA_hwloc_base_binding_policy").has_value();
  context.env_tmpdir = env("OMPI_MCA_orte_tmpdir_base") || env("OMPI_MCA_orte_local_tmpdir_base");
  context.local_cores = local_cores();
  context.env_pml = env("OMPI_MCA_pml");
  for (const auto& name : forwardable_variables()) {
    if (env(name)) context.forwarded.push_back(name);
  }
  if (!self.empty()) context.agent = self;
  return context;
}

std::optional<std::string> python_path_with_hook(const std::string& self, const EnvLookup& env) {
  const auto hook = python_startup_directory(self);
  if (hook.empty() || env("POPDIST_PYTHON_EXIT_HOOK").value_or("1") == "0") return std::nullopt;
  const auto user_path = env("PYTHONPATH").value_or("");
  return user_path.empty() ? hook : hook + ":" + user_path;
}

}  // namespace popdist::cli
