"""Cutting a narrower index classifier from a trained one (``training.prune``): the channels
a norm scales most are kept, cutting channels that add nothing leaves every output as it was,
and the cut checkpoint fine-tunes and exports like any other.

Needs torch (the train extra); CI runs ``pytest -m train``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from training.classifier import _network, export_classifier  # noqa: E402
from training.prune import kept_channels, main, prune_classifier  # noqa: E402
from vision.reader import CLASSIFIER_CLASSES  # noqa: E402

WIDTHS = (8, 16, 32, 32)
CUT = (6, 12, 24, 20)


def _trained(path: Path, dead: bool) -> nn.Module:
    """A network of WIDTHS with moved norm statistics; with ``dead``, the channels past each
    layer's cut width scale and shift by zero (they add nothing past their ReLU)."""
    torch.manual_seed(3)
    model = _network(len(CLASSIFIER_CLASSES), WIDTHS)
    model.train()
    model(torch.rand(8, 3, 32, 32))
    model.eval()
    norms = [m for m in model.features if isinstance(m, nn.BatchNorm2d)]
    cuts = [CUT[0], CUT[0], CUT[1], CUT[1], CUT[2], CUT[2], CUT[3]]
    with torch.no_grad():
        for norm, cut in zip(norms, cuts, strict=True):
            norm.weight.uniform_(0.5, 1.5)
            if dead:
                # the dead channels are spread among the live ones, not only at the end
                order = torch.randperm(norm.num_features)
                norm.weight[order[cut:]] = 0.0
                norm.bias[order[cut:]] = 0.0
    torch.save({"model": model.state_dict(), "widths": list(WIDTHS)}, path)
    return model


def test_the_channels_scaled_most_are_kept_in_order() -> None:
    scales = torch.tensor([0.1, -2.0, 0.5, 3.0, 0.0])
    assert kept_channels(scales, 2).tolist() == [1, 3]
    assert kept_channels(scales, 5).tolist() == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="cannot keep 6 of 5 channels"):
        kept_channels(scales, 6)


def test_cutting_channels_that_add_nothing_keeps_every_output(tmp_path: Path) -> None:
    model = _trained(tmp_path / "full.pt", dead=True)
    out = prune_classifier(tmp_path / "full.pt", CUT, tmp_path / "cut.pt")
    state = torch.load(out, weights_only=False)
    assert state["widths"] == list(CUT)
    cut = _network(len(CLASSIFIER_CLASSES), CUT)
    cut.load_state_dict(state["model"])
    cut.eval()
    crops = torch.rand(5, 3, 32, 32)
    with torch.no_grad():
        (logits, embedding), (cut_logits, cut_embedding) = model(crops), cut(crops)
    torch.testing.assert_close(cut_logits, logits, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(cut_embedding, embedding, atol=1e-5, rtol=1e-4)
    assert cut.embed.in_features == CUT[3] * 16


def test_cutting_live_channels_changes_the_readings_and_the_cut_exports(tmp_path: Path) -> None:
    model = _trained(tmp_path / "full.pt", dead=False)
    out = prune_classifier(tmp_path / "full.pt", CUT, tmp_path / "cut.pt")
    cut = _network(len(CLASSIFIER_CLASSES), CUT)
    cut.load_state_dict(torch.load(out, weights_only=False)["model"])
    cut.eval()
    crops = torch.rand(5, 3, 32, 32)
    with torch.no_grad():
        assert not torch.allclose(cut(crops)[0], model(crops)[0], atol=1e-4)
    exported = export_classifier(out, tmp_path / "cut.onnx")
    assert exported.is_file() and exported.stat().st_size > 0


def test_wider_than_the_checkpoint_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _trained(tmp_path / "full.pt", dead=False)
    with pytest.raises(ValueError, match=r"cannot cut widths \(8, 16, 64, 32\)"):
        prune_classifier(tmp_path / "full.pt", (8, 16, 64, 32), tmp_path / "cut.pt")
    with pytest.raises(SystemExit) as exited:
        main([str(tmp_path / "full.pt"), "--widths", "8,16,64,32", "--out", str(tmp_path / "x.pt")])
    assert exited.value.code == 2
    assert "training.prune: cannot cut widths" in capsys.readouterr().err
    assert (
        main([str(tmp_path / "full.pt"), "--widths", "6,12,24,20", "--out", str(tmp_path / "y.pt")])
        == 0
    )
