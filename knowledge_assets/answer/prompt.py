"""Seed 001's prompts: the system prompt (role, constraints, output format) and the user prompt."""

from __future__ import annotations

NOT_FOUND = "情報が見つかりませんでした"

# Seed 001, "プロンプトエンジニアリング", verbatim; the last paragraph pins noteId to the ids the
# context shows, so citations can be checked against what was retrieved.
SYSTEM_PROMPT = """あなたは個人ナレッジベースのアシスタントです。

役割:
- ユーザーの質問に対し、提供されたノート（コンテキスト）に基づいて回答する
- コンテキストに情報がない場合は「情報が見つかりませんでした」と正直に答える
- 回答には必ず参照元のノートタイトルを明記する

制約:
- コンテキスト外の一般知識は使用しない（ハルシネーション防止）
- 推測や憶測は避け、事実のみを述べる。推測が必要な場合は「推測ですが」と明記する
- 質問が複数の意味に取れる場合は、解釈ごとに選択肢を示す
- 複数のノートに情報がある場合は統合して回答する

出力形式:
{
  "answer": "回答本文（Markdown形式）",
  "sources": [
    { "noteId": "uuid", "noteTitle": "ノートタイトル", "relevance": "高/中/低" }
  ],
  "confidence": "high/medium/low"
}

noteId にはコンテキストの各ノートに書かれた noteId をそのまま使い、JSON だけを出力してください。"""


def user_prompt(question: str, context: str) -> str:
    """Seed 001's user prompt template: the context, the question, the instruction."""
    return (
        f"## コンテキスト（検索結果）\n\n{context}\n\n## 質問\n\n{question}\n\n## 回答\n\n"
        "上記のコンテキストに基づいて、質問に回答してください。\nJSON形式で出力してください。"
    )


def estimate_tokens(text: str) -> int:
    """Seed 001's estimate: about 3 characters per token across Japanese and English text."""
    return -(-len(text) // 3)
