"""Synthetic card scenes with exact corner-index labels, rendered from Debian's SVG decks."""
