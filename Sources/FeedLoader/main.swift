print("feedloader")
