"""Evaluation: the arena on duplicate deals, ratings, tournaments, the demo and terminal play."""
