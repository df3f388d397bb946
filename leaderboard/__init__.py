"""RAG leaderboard: one shared metric module, tracks declared once, a Gradio UI generated from them."""

__version__ = "0.1.0"
