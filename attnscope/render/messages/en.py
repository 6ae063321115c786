"""The English catalogue: every word the views print, keyed by view.

Keep the keys in the same order as the other language's catalogue; a test fails when
a key exists in one and not the other. Each view's keys sit in its own section.
"""

MESSAGES: dict[str, str] = {
    # == common ==
    "common.sum": "sum",
    # == end common ==
    # == tokens ==
    # == end tokens ==
    # == weights ==
    # == end weights ==
    # == mask ==
    # == end mask ==
    # == heads ==
    # == end heads ==
    # == matrix ==
    # == end matrix ==
    # == info ==
    # == end info ==
    # == trace ==
    # == end trace ==
    # == explain ==
    # == end explain ==
    # == rope ==
    # == end rope ==
    # == reuse ==
    # == end reuse ==
    # == roles (issue 13) ==
    # == end roles ==
    # == measure norm (issue 13) ==
    # == end measure norm ==
    # == figures (issue 14) ==
    # == end figures ==
    # == explore page (issue 14) ==
    # == end explore page ==
    # == generate (issue 15) ==
    # == end generate ==
    # == segments and chat template (issue 15) ==
    # == end segments ==
    # == first hour: progress, cache, width (issue 12) ==
    # == end first hour ==
}
