"""PyTorch helpers: process group, device and sharded data from popdist's context."""

import datetime
from typing import Any, Iterator, Optional, Sized, Tuple, Union

import torch
import torch.distributed
import torch.utils.data
from torch.utils.data.distributed import DistributedSampler as _TorchDistributedSampler

from .errors import PopDistError

__all__ = ["DataLoader", "DistributedSampler", "RendezvousError", "device", "init_process_group", "rendezvous"]

RENDEZVOUS_TIMEOUT: float
NO_LIMIT: datetime.timedelta

class RendezvousError(PopDistError, RuntimeError): ...

_Timeout = Union[None, float, int, datetime.timedelta]

def rendezvous(timeout: _Timeout = None) -> Tuple[torch.distributed.Store, int, int]: ...
def init_process_group(backend: Optional[str] = None, timeout: _Timeout = None, **kwargs: Any) -> Any: ...
def device() -> torch.device: ...

class DistributedSampler(_TorchDistributedSampler):
    def __init__(self, dataset: Sized, num_replicas: Optional[int] = None, rank: Optional[int] = None,
                 shuffle: bool = True, seed: Optional[int] = None, drop_last: bool = False) -> None: ...
    def __iter__(self) -> Iterator[int]: ...

class DataLoader(torch.utils.data.DataLoader):
    sampler: DistributedSampler
    def __init__(self, dataset: Any, batch_size: Optional[int] = 1, shuffle: bool = False, seed: Optional[int] = None,
                 drop_last: bool = False, **kwargs: Any) -> None: ...
    def set_epoch(self, epoch: int) -> None: ...
