"""What the Least Score planner (``leastscore_env.plan``) and its compiled kernels share: the
layout of a decoded observation batch (``plan.decoded`` builds one from ``plan.decode``,
``plan_kernels`` read it, ``feature_kernels.decode_row`` fills one from observation rows). It
imports nothing but the standard library, so no import circle and no compiler at import."""

from collections import namedtuple

#: ``(B, ...)`` arrays, contiguous, int64 unless said: the hand's card ids in canonical order
#: (``-1``: empty slot), their L1 values and total, its rank counts (B, 13); the floor's ids, which
#: are cards (bool) and their values; the unseen pool's rank and value odds (float64, (B, 13) and
#: (B, 11)); per opponent (B, P-1) the value and number of its known cards, its hand size and
#: whether it is still in the round (bool); the turn.
Decoded = namedtuple("Decoded", "hand hand_val hand_sum hand_counts floor floor_ok floor_val pool_rank_p pool_val_p "
                                "opp_known_sum opp_known_count opp_size opp_alive turn")
