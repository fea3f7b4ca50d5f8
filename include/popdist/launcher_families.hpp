#pragma once
/// @file launcher_families.hpp
/// The one table of launcher families (design.md §3.2). A row gives the family's enumerator in
/// popdist::Launcher, its name (the one spelling everywhere: POPDIST_LAUNCHER, the CLI, Python's
/// topology().launcher, error messages) and its detection priority. Everything else about a family
/// -- its variables, its probe, its quirks -- is in its own file, src/core/launchers/<name>.cpp,
/// which defines detail::<name>_family(). Adding a family is that file and a row here.
///
/// Rows are in the order the names are listed ("expected one of ..."); a new family goes last.
/// The priority is the order detect() tries the families when POPDIST_LAUNCHER does not force one,
/// lowest first; 0: never detected, only forced. Why this order, the innermost launcher first (a
/// launcher that starts its workers inside another's allocation or step comes before it):
/// - torchrun runs inside MPI/Slurm allocations, and sets every variable the PyTorch family reads.
/// - horovod: horovodrun's Gloo mode starts workers itself (under sbatch, or srun -n1 horovodrun);
///   in its MPI mode it sets no HOROVOD_RANK, so it never competes with mpirun's variables.
/// - The MPI launchers win over Slurm and LSF because mpirun inside salloc leaves SLURM_* describing
///   its daemon step. PALS comes before MPICH since both set PMI_RANK/PMI_SIZE; MVAPICH2 before both.
/// - pytorch below the MPI launchers: DeepSpeed's MPI discovery, Accelerate and job scripts copy
///   OMPI_COMM_WORLD_*/PMI_* into RANK/WORLD_SIZE, so under mpirun they are a copy, not the launch.
///   Above LSF and Slurm: `srun --ntasks-per-node=1 deepspeed ...` or a launcher per node under
///   jsrun starts the workers that RANK/WORLD_SIZE describe inside one task of the step.
/// - lsf before slurm only for a stable order: the two schedulers never run the same job.
/// - popdist (PopRun's replica variables, no launcher) after every launcher; singleton is what
///   remains when nothing else is present.
/// - mpi: its identity exists only once MPI has started, so it is only ever forced.
///
/// Priorities are spaced by 10 so that a family fits between two others with a row of its own.
#define POPDIST_LAUNCHER_FAMILIES(FAMILY) \
  /*     enumerator name       priority */ \
  FAMILY(Singleton, singleton, 110)        \
  FAMILY(PopDist,   popdist,   100)        \
  FAMILY(OpenMpi,   openmpi,    30)        \
  FAMILY(Mpich,     mpich,      60)        \
  FAMILY(Pals,      pals,       50)        \
  FAMILY(Mvapich2,  mvapich2,   40)        \
  FAMILY(Slurm,     slurm,      90)        \
  FAMILY(Torchrun,  torchrun,   10)        \
  FAMILY(Horovod,   horovod,    20)        \
  FAMILY(Lsf,       lsf,        80)        \
  FAMILY(PyTorch,   pytorch,    70)        \
  FAMILY(Mpi,       mpi,         0)
