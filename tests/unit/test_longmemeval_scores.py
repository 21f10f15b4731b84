"""LongMemEval's scores (benchmarks/memory_bench/longmemeval.py): recall_all asks for every gold
item in the first k, recall_any for at least one; both are reported overall and per question type."""

from memory_bench.longmemeval import Scores, recall_all, recall_any

RANKED = ["a", "b", "c", "d", "e", "f"]


def test_given_one_of_two_gold_items_in_the_first_k_then_recall_any_counts_it_and_recall_all_does_not():
    gold = {"b", "f"}
    assert (recall_any(RANKED, gold, 5), recall_all(RANKED, gold, 5)) == (1.0, 0.0)
    assert (recall_any(RANKED, gold, 10), recall_all(RANKED, gold, 10)) == (1.0, 1.0)


def test_given_no_gold_item_in_the_first_k_then_both_are_zero():
    assert (recall_any(RANKED, {"f"}, 5), recall_all(RANKED, {"f"}, 5)) == (0.0, 0.0)
    assert (recall_any(RANKED, set(), 5), recall_all(RANKED, set(), 5)) == (0.0, 0.0)


def test_a_question_without_turn_evidence_is_left_out_of_the_turn_means_only():
    scores = Scores()
    scores.add(turn_recall_any_at_5=1.0, session_recall_any_at_5=1.0)
    scores.add(turn_recall_any_at_5=None, session_recall_any_at_5=0.0)
    assert scores.means() == {"turn_recall_any_at_5": 1.0, "session_recall_any_at_5": 0.5}
