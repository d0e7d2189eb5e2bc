"""handreader's vision: synthetic scenes, the card reader (ONNX), evaluation, calibration."""
