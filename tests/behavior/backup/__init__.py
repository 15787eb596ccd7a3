"""Whole-database backup and restore: the idb layer's transfer and the store's backup."""
