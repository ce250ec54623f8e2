"""Widgets shared by several screens."""

from .as_of import AsOfBox
from .chart import ColumnChart
from .chrome import KeyBar, NavTabs, StoreHeader, TextBox
from .dialogs import ChoiceDialog, FormDialog, HelpScreen, NoteDialog, PromptDialog
from .task import TaskPanel
from ..snippets import query_terms, snippet
from .text import clip, highlight, item_text, markdown_text, one_line, split_summary

__all__ = ["AsOfBox", "ColumnChart", "KeyBar", "NavTabs", "StoreHeader", "TextBox", "ChoiceDialog", "FormDialog", "HelpScreen", "NoteDialog", "PromptDialog", "TaskPanel",
           "clip", "highlight", "item_text", "markdown_text", "one_line", "query_terms", "snippet", "split_summary"]
