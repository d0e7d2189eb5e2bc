"""The classifier's shape changes (``training.classifier.shape_jitter``): they change the
crops they are drawn for, keep the glyph in view and the values in range, and are repeatable.

Needs torch (the train extra); CI runs ``pytest -m train``.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from training.classifier import _augment, shape_jitter  # noqa: E402

SIDE = 32


def _bars(count: int) -> object:
    """White crops with a dark vertical bar (the ink) in the middle."""
    batch = torch.ones(count, 3, SIDE, SIDE)
    batch[:, :, 8:24, 14:18] = 0.1
    return batch


def _ink(batch: object) -> object:
    return (batch.mean(dim=1) < 0.5).float()  # type: ignore[attr-defined]


def test_no_share_leaves_the_batch_alone() -> None:
    batch = _bars(8)
    out = shape_jitter(batch, torch.Generator().manual_seed(0), 0.0)
    assert torch.equal(out, batch)


def test_every_chosen_crop_changes_and_keeps_its_glyph() -> None:
    batch = _bars(64)
    out = shape_jitter(batch, torch.Generator().manual_seed(1), 1.0)
    assert out.shape == batch.shape
    assert float(out.min()) >= 0.0 and float(out.max()) <= 1.0
    changed = (out - batch).abs().flatten(1).max(dim=1).values > 0.05
    assert bool(changed.all())
    ink = _ink(out)
    amount = ink.flatten(1).sum(dim=1)
    bar = float(_ink(batch)[0].sum())  # 64 pixels
    # warped, thickened, thinned or coarsened, the bar is still there and of its order of size
    assert bool((amount > bar * 0.15).all()) and bool((amount < bar * 3).all())
    columns = torch.arange(SIDE).float()
    centre_x = (ink.sum(dim=1) * columns).sum(dim=1) / ink.sum(dim=(1, 2))
    assert bool(((centre_x - 15.5).abs() < SIDE / 4).all())
    # the input is not modified in place
    assert torch.equal(batch, _bars(64))


def test_the_share_is_about_the_share_changed() -> None:
    batch = _bars(2000)
    out = shape_jitter(batch, torch.Generator().manual_seed(2), 0.3)
    changed = (out - batch).abs().flatten(1).max(dim=1).values > 0.0
    assert 0.25 < float(changed.float().mean()) < 0.35


def test_strokes_are_made_both_thicker_and_thinner() -> None:
    batch = _bars(400)
    out = shape_jitter(batch, torch.Generator().manual_seed(3), 1.0)
    amount = _ink(out).flatten(1).sum(dim=1)
    bar = float(_ink(batch)[0].sum())
    assert int((amount > bar * 1.2).sum()) > 20
    assert int((amount < bar * 0.8).sum()) > 20


def test_same_generator_same_changes() -> None:
    batch = _bars(16)
    first = shape_jitter(batch, torch.Generator().manual_seed(4), 0.5)
    again = shape_jitter(batch, torch.Generator().manual_seed(4), 0.5)
    assert torch.equal(first, again)


def test_augment_applies_shapes_only_when_asked() -> None:
    batch = _bars(256)
    plain = _augment(batch, torch.Generator().manual_seed(5))
    shaped = _augment(batch, torch.Generator().manual_seed(5), shapes=1.0)
    assert plain.shape == shaped.shape == batch.shape
    assert not torch.equal(plain, shaped)
