"""popdist.torch.DataLoader with worker processes (argv[1]: fork or spawn) after init(): the
workers (fork children, or fresh interpreters) read their shard and may ask the getters; the job
then meets and ends cleanly. Writes <out>/instance<N>.json."""

import json
import sys
from pathlib import Path

import torch.utils.data

import popdist
import popdist.torch


class Squares(torch.utils.data.Dataset):
    def __len__(self):
        return 24

    def __getitem__(self, index):
        # Inside a worker: the getters answer there too (no MPI needed).
        return index, popdist.getInstanceIndex()


def main():
    method, out = sys.argv[1], Path(sys.argv[2])
    popdist.init()
    loader = popdist.torch.DataLoader(Squares(), batch_size=4, shuffle=True, num_workers=2,
                                      multiprocessing_context=method)
    seen, reported = [], set()
    for indices, instances in loader:
        seen += [int(i) for i in indices]
        reported |= {int(i) for i in instances}
    popdist.synchronize(timeout=60)
    me = popdist.getInstanceIndex()
    (out / f"instance{me}.json").write_text(json.dumps({"seen": seen, "reported": sorted(reported)}))


if __name__ == "__main__":  # spawn re-imports this module in each worker
    main()
