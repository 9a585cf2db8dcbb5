"""Agreement between raters and judges, and judge position/length bias."""
