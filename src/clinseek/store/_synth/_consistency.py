def check_consistency(path):
    return []
