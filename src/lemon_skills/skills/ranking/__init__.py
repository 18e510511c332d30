"""Ranking skills for a request: tokens, the BM25F index and its disk snapshot, the ranker,
the optional embedding similarity and the evaluation harness."""
