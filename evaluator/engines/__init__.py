"""Engines that score a dataset past one process, all through one partition function.

    partition.score_frame(df, config)   rows in, one results row per sample out (any engine)
    ray.run_ray(data, config, ...)      Ray Data: read, map_batches(FrameScorer), stream out
    summary.RunTally                    a run's summary built from streamed results frames
"""
