"""Emitters: turn validated plans into files, reports and pictures."""
