//! The MPI world (`--features mpi`): joined only when an MPI launcher (`mpirun`, `srun`,
//! MPICH's `mpiexec`) started this process among others, so a storlab run by hand behaves
//! exactly as without the feature. The protocol on top is `clients.rs`; this file only moves
//! bytes (docs/decisions/0020).

use crate::clients::Transport;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::{Communicator, CommunicatorCollectives};
use mpi::Count;
use std::time::Duration;

/// Variables the launchers set in every process they start: Open MPI's `mpirun`, PMIx (Open
/// MPI 5, Slurm's `srun --mpi=pmix`), and PMI-1/2 (MPICH's Hydra, `srun --mpi=pmi2`). Without
/// one, `MPI_Init` would start a singleton world of one process, so it is not called at all.
const LAUNCHER_VARIABLES: [&str; 3] = ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"];

/// How long a rank that arrived at a step first sleeps between looks at whether the others
/// have. Open MPI busy-polls inside a blocking collective: a rank done with its share of a
/// `validate` would spin on its core for as long as the slowest rank works, taking that core
/// from everything else on a shared machine. Sleeping costs the step at most this much; the
/// all-gather after it still releases all ranks together.
const ARRIVAL_POLL: Duration = Duration::from_millis(1);

/// This process's MPI world; MPI is finalized when it is dropped.
pub struct World {
    world: SimpleCommunicator,
    /// Kept alive until the end: dropping it finalizes MPI.
    _universe: Universe,
}

impl World {
    /// The world, when a launcher started this process among two or more; `None` (and MPI
    /// left alone, or finalized again at once for a world of one) otherwise.
    pub fn join() -> Option<World> {
        if !LAUNCHER_VARIABLES
            .iter()
            .any(|name| std::env::var_os(name).is_some())
        {
            return None;
        }
        let universe = mpi::initialize()?;
        let world = universe.world();
        (world.size() > 1).then_some(World {
            world,
            _universe: universe,
        })
    }
}

impl Transport for World {
    fn rank(&self) -> u32 {
        self.world.rank().unsigned_abs()
    }

    fn size(&self) -> u32 {
        self.world.size().unsigned_abs()
    }

    fn all_gather(&self, mine: &[u8]) -> Vec<Vec<u8>> {
        // Wait for every rank idly (a non-blocking barrier, tested between sleeps), then
        // gather, which no rank then waits long for.
        let mut arrived = self.world.immediate_barrier();
        while let Err(waiting) = arrived.test() {
            arrived = waiting;
            std::thread::sleep(ARRIVAL_POLL);
        }
        let size = self.world.size().unsigned_abs() as usize;
        // MPI counts are C ints: a part is at most 2 GiB (a job's statistics are kilobytes).
        let my_len = Count::try_from(mine.len()).unwrap_or(Count::MAX);
        let mut lens: Vec<Count> = vec![0; size];
        self.world.all_gather_into(&my_len, &mut lens[..]);
        let mut starts: Vec<Count> = Vec::with_capacity(size);
        let mut total: Count = 0;
        for len in &lens {
            starts.push(total);
            total = total.saturating_add(*len);
        }
        let mut all = vec![0u8; total.unsigned_abs() as usize];
        {
            let mut partition = PartitionMut::new(&mut all[..], lens.clone(), &starts[..]);
            self.world
                .all_gather_varcount_into(&mine[..my_len.unsigned_abs() as usize], &mut partition);
        }
        starts
            .iter()
            .zip(&lens)
            .map(|(start, len)| {
                let start = start.unsigned_abs() as usize;
                all[start..start + len.unsigned_abs() as usize].to_vec()
            })
            .collect()
    }
}
