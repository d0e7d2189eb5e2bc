"""Annotated images: readings, hands, scores and winners drawn on photos and live frames."""
