"""The disk cache in front of provider calls and its key/value codec."""
