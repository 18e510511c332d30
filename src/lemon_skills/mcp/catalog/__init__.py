"""What the model sees of a set of servers: unique model-facing names (``naming``), exact
allow/block filters (``filters``), the catalogue built from each server's listing (``build``),
pinning against rug pulls (``pinning``), the per-directory views over one manager
(``views``), calls to their tools under each server's policy (``calls``), reads of resources,
prompts and served skills (``reads``) and the tools as search documents (``toolsearch``)."""
