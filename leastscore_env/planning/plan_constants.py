"""What the Least Score planner (``leastscore_env.planning.plan``) and its compiled kernels share: the
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
#: What ``leastscore:counting``'s row function reads besides the batch (``plan.counting_params``):
#: gamma, refill and min_success, the opponents' value tilt, L8's tie rule, the group tables
#: (best single, best group by rank set), the rank values and the discard actions' hand slots.
CountingParams = namedtuple("CountingParams", "gamma refill min_success tilt tie_wins single best rank_value "
                                              "discard_slots")
#: What ``leastscore:dp``'s row function reads besides the batch (``dp.dp_tables``): the flat worth
#: tables ``X`` with their offsets by live-player count, the turns tracked and the number of
#: hands, lam and margin, L8's tie rule and penalty, the opponents' tilt table, the hand codes
#: and their draw / give-up tables, the code base and the discard actions' hand slots.
DPTables = namedtuple("DPTables", "X xoff nmax H lam margin tie_wins penalty exp_tab codes add remove base6 "
                                  "discard_slots")
