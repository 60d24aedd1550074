# Positional Encoding Explorer: one replica. See README.md, "Deployment".
FROM python:3.11-slim

# MALLOC_ARENA_MAX: fewer malloc arenas for Streamlit's many session threads (about 60 MB
# less resident memory with 50 sessions open, measured by benchmarks/load_test.py).
# MALLOC_MMAP_THRESHOLD_: arrays of 4 MiB and more unmapped when freed, not left as holes in the
# heap (50 sessions with their own settings: peak 177 -> 109 MB above the start).
# MALLOC_TRIM_THRESHOLD_: up to 4 MiB kept free at the top of a heap, so that a computation's
# blocks, freed and made again, are not faulted in anew each time (Home's cold computation at the
# largest settings 445 -> 336 ms, benchmarks/JOURNAL.md, "2026-11-29, 04:05-05:05"). The app's
# start-up sets all three too (explorer/ui/startup.py); here they hold from the first allocation.
# OPENBLAS_NUM_THREADS=1: a replica serves one core's worth of sessions, and OpenBLAS's extra
# threads only wait for each other there (benchmarks/JOURNAL.md, "2026-11-24: Cold computations":
# Home's cold run 141-606 ms with two BLAS threads under load, 141-161 ms with one).
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=4194304 MALLOC_TRIM_THRESHOLD_=4194304 OPENBLAS_NUM_THREADS=1
RUN useradd --create-home --uid 10001 explorer
WORKDIR /app

COPY requirements.txt .
RUN python -m pip install -r requirements.txt
COPY --chown=explorer:explorer . .

USER explorer
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
    CMD python -c "import urllib.request, sys; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).read() != b'ok')"
# browser.serverAddress: the banner then names it instead of asking an outside service
# for this machine's public address.
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501", "--browser.serverAddress=localhost"]
