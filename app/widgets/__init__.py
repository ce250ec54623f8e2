"""Widgets shared by several screens."""

from .chrome import NavTabs, StoreHeader
from .dialogs import ChoiceDialog, HelpScreen, NoteDialog, PromptDialog
from .task import TaskPanel
from .text import highlight, query_terms, snippet

__all__ = ["NavTabs", "StoreHeader", "ChoiceDialog", "HelpScreen", "NoteDialog", "PromptDialog", "TaskPanel",
           "highlight", "query_terms", "snippet"]
