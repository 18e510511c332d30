"""What the model sees of a set of servers: unique model-facing names (``naming``), exact
allow/block filters (``filters``), the catalogue built from each server's listing (``build``),
pinning against rug pulls (``pinning``), the per-directory views over one manager
(``views``) and the tools as search documents (``toolsearch``)."""
