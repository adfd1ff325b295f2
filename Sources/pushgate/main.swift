print("pushgate")
