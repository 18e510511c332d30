"""What the model sees of a set of servers: unique model-facing names (``naming``), exact
allow/block filters (``filters``) and the catalogue of tools and utilities built from each
server's listing (``build``), all pure."""
