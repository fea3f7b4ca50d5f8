#pragma once
// PopRun's variables (design.md §3.1): read by detect(); their presence forms the popdist family.

namespace popdist::detail::poprun {

inline constexpr const char* kTotal = "POPDIST_NUM_TOTAL_REPLICAS";
inline constexpr const char* kLocal = "POPDIST_NUM_LOCAL_REPLICAS";
inline constexpr const char* kOffset = "POPDIST_REPLICA_INDEX_OFFSET";
inline constexpr const char* kIpus = "POPDIST_NUM_IPUS_PER_REPLICA";
inline constexpr const char* kUniform = "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE";
inline constexpr const char* kLocalInstance = "POPDIST_LOCAL_INSTANCE_INDEX";

/// The variables that describe replicas: any of them without a launcher makes the family "popdist".
inline constexpr const char* kReplicaVariables[] = {kTotal, kLocal, kOffset, kUniform};
/// The whole PopRun contract: any of them makes isPopdistEnvSet() true.
inline constexpr const char* kContractVariables[] = {kTotal, kLocal, kOffset, kIpus, kUniform, kLocalInstance};

}  // namespace popdist::detail::poprun
