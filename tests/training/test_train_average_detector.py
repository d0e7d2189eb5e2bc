"""Averaging a fine-tuned detector with its start (``training.detector.average_detectors``):
every weight and batch-norm statistic is the asked share of each, counters are the fine-tune's,
a share outside [0, 1] or another network is refused.

Needs torch (the train extra); CI runs ``pytest -m train``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from training.detector import average_detectors  # noqa: E402


def _save(path: Path, seed: int, channels: int = 4, key: str = "model") -> object:
    torch.manual_seed(seed)
    network = torch.nn.Sequential(
        torch.nn.Conv2d(3, channels, 3), torch.nn.BatchNorm2d(channels), torch.nn.SiLU()
    )
    with torch.no_grad():
        network[1].weight.copy_(torch.rand(channels) + 0.5)
        network[1].running_mean.copy_(torch.randn(channels))
        network[1].running_var.copy_(torch.rand(channels) + 0.5)
        network[1].num_batches_tracked.fill_(seed)
    checkpoint = {"model": None, "ema": None}
    checkpoint[key] = network.half() if key == "ema" else network
    torch.save(checkpoint, path)
    return network.float()


def test_the_average_weighs_every_weight_and_statistic(tmp_path: Path) -> None:
    start = _save(tmp_path / "start.pt", 1)
    tuned = _save(tmp_path / "tuned.pt", 2, key="ema")  # a training run's EMA, saved in half
    out = average_detectors(tmp_path / "start.pt", tmp_path / "tuned.pt", 0.25, tmp_path / "a.pt")
    mixed = torch.load(out, map_location="cpu", weights_only=False)
    assert mixed["epoch"] == -1
    state = mixed["model"].state_dict()
    first, second = start.state_dict(), tuned.state_dict()
    for key in ("0.weight", "0.bias", "1.weight", "1.running_mean", "1.running_var"):
        want = 0.25 * second[key].float() + 0.75 * first[key].float()
        assert torch.allclose(state[key], want, atol=1e-6), key
        assert not torch.allclose(state[key], first[key].float(), atol=1e-3), key
    assert int(state["1.num_batches_tracked"]) == 2
    whole = average_detectors(tmp_path / "start.pt", tmp_path / "tuned.pt", 1.0, tmp_path / "b.pt")
    assert torch.equal(
        torch.load(whole, weights_only=False)["model"].state_dict()["0.weight"],
        second["0.weight"].float(),
    )


def test_a_share_outside_the_unit_range_or_another_network_is_refused(tmp_path: Path) -> None:
    _save(tmp_path / "start.pt", 1)
    _save(tmp_path / "wide.pt", 2, channels=6)
    with pytest.raises(ValueError, match="must lie in"):
        average_detectors(tmp_path / "start.pt", tmp_path / "start.pt", 1.5, tmp_path / "x.pt")
    with pytest.raises(ValueError, match="differ in the shape"):
        average_detectors(tmp_path / "start.pt", tmp_path / "wide.pt", 0.5, tmp_path / "x.pt")
    assert not (tmp_path / "x.pt").exists()
