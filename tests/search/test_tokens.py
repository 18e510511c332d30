"""Word splitting, stop words, stemming and edit distance."""

from __future__ import annotations

from collections import Counter

from lemon_skills.search import tokens


def test_terms_fold_accents_drop_stop_words_and_stem():
    assert tokens.words("Café, DEPLOYING!") == ["cafe", "deploying"]
    assert tokens.terms("please help me deploy the deployments") == ["deploy", "deploy"]
    assert tokens.term_counts("deploys and deploying") == {"deploy": 2}


def test_key_and_identifier_words():
    assert tokens.key_words("pdf-to_markdown") == ["pdf", "to", "markdown"]
    assert tokens.identifier_words("listPullRequests") == ["list", "pull", "requests"]


def test_one_edit_apart():
    assert tokens.within_one_edit("kubernetes", "kubernets")
    assert tokens.within_one_edit("form", "from")
    assert not tokens.within_one_edit("form", "farm2")
    assert "kubernets" in tokens.deletions("kubernetes")


def test_spaced_words_and_term_counts_agree_with_words():
    # "é" forces a fold, which turns "™" into capitals that words() does not take for a word.
    for text in ["Café™ deploys—DEPLOYING", "naïve x²", "Straße ﬁle", "plain ASCII text"]:
        assert tokens.spaced(text).split() == tokens.words(text), text
        assert tokens.term_counts(text) == Counter(tokens.terms(text)), text
    assert list(tokens.term_counts("zebra and apples, zebras")) == ["zebra", "appl"]
