"""What the product keeps: the tamper-evident audit log of verified rounds."""
