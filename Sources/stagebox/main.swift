print("stagebox")
