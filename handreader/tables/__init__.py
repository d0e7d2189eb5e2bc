"""Tables: cards grouped into hands, hands scored per game, rounds verified, live frames scored."""
