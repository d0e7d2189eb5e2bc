"""Training of the recognizer's models (needs the ``train`` extra: torch, ultralytics)."""
