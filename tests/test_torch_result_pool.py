"""pyaclnn's pool of large torch results never hands out storage something else can still reach
(design decision 20; pyaclnn/_allocator.py TorchBlocks).

Each test keeps every result it received, makes more results in the producing process, and only
then compares what it kept with torch's own replication_pad2d on the same input: a storage the
pool handed out again shows up as a changed earlier result.  The results are 1 MiB, well above
the pool's 256 KiB threshold.
"""
import pytest

torch = pytest.importorskip("torch")
import pyaclnn.functional as F  # noqa: E402

PADDING = (1, 2, 3, 4)
SHAPE = (1, 4, 121, 125)   # padded: 1 x 4 x 128 x 128 float32 = 256 KiB ...
BATCH = 4                  # ... times 4 = 1 MiB


def _input(seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn((BATCH,) + SHAPE[1:], generator=generator)


def _expected(seed):
    return torch.nn.functional.pad(_input(seed), PADDING, mode="replicate")


def _ours(seed):
    return F.replication_pad2d(_input(seed), PADDING)


class PaddedSamples(torch.utils.data.Dataset):
    def __len__(self):
        return 24

    def __getitem__(self, index):
        return _ours(index)


def test_dataloader_workers_keep_their_samples():
    loader = torch.utils.data.DataLoader(PaddedSamples(), batch_size=None, num_workers=2)
    received = list(loader)      # every sample kept while the workers go on producing
    assert len(received) == 24
    changed = [i for i, sample in enumerate(received) if not torch.equal(sample, _expected(i))]
    assert changed == []


def _produce(queue, count):
    for seed in range(count):
        queue.put(_ours(seed))
    # Results after the sent ones were dropped here: the pool must not reuse shared storage.
    for seed in range(count, 2 * count):
        result = _ours(seed)
        assert torch.equal(result, _expected(seed))
    queue.put("done")


def test_mp_queue_receiver_keeps_its_tensors():
    context = torch.multiprocessing.get_context("spawn")
    queue = context.Queue()
    producer = context.Process(target=_produce, args=(queue, 8))
    producer.start()
    received = []
    while True:
        item = queue.get(timeout=120)
        if isinstance(item, str):
            break
        received.append(item)
    producer.join(timeout=120)
    assert producer.exitcode == 0
    changed = [i for i, sample in enumerate(received) if not torch.equal(sample, _expected(i))]
    assert changed == []


def test_result_kept_through_its_storage_only():
    kept = []
    for seed in range(8):
        result = _ours(seed)
        kept.append((seed, result.untyped_storage(), result.shape))
        del result
    for seed, storage, shape in kept:
        view = torch.empty(0).set_(storage, 0, shape)
        assert torch.equal(view, _expected(seed)), seed


def test_shared_result_is_not_reused_in_the_same_process():
    first = _ours(0)
    first.share_memory_()      # what torch.multiprocessing does to a tensor it sends
    address = first.data_ptr()
    del first
    seconds = [_ours(seed) for seed in range(1, 4)]
    assert all(second.data_ptr() != address for second in seconds)
    assert all(torch.equal(second, _expected(seed)) for seed, second in enumerate(seconds, 1))


def test_pool_still_reuses_a_dropped_result():
    first = _ours(0)
    address = first.data_ptr()
    del first
    second = _ours(1)
    assert second.data_ptr() == address      # the pool's purpose: no new pages per call
    assert torch.equal(second, _expected(1))
