"""Seed 002's trainer package: BERT sentiment fine-tuning with Hugging Face's Trainer, submitted
with `gcloud ai-platform jobs submit training --package-path trainer` or the Vertex SDK's
CustomPythonPackageTrainingJob. The replica pip-installs it with these dependencies from the
package index the host is configured with (docs/containers.md "Python packages")."""

from setuptools import find_packages, setup

REQUIRED_PACKAGES = [
    # The article's stack, pinned to the versions of its time: transformers 4.40.1 runs on the
    # prebuilt image's torch 1.13 (today's needs torch 2), and HF's Trainer needs accelerate.
    "transformers==4.40.1",
    "datasets==2.19.0",
    "accelerate==0.30.1",
    "tqdm",
    # What datasets 2.19 reads CSV with, at versions built for NumPy 1 (the image's torch is):
    # today's pyarrow and pandas need NumPy 2 and do not say so in their metadata.
    "pyarrow==16.1.0",
    "pandas==2.2.2",
]

setup(
    name="trainer",
    version="0.1",
    install_requires=REQUIRED_PACKAGES,
    packages=find_packages(),
    include_package_data=True,
    description="Trainyard | Training | PyTorch | Text Classification | Python Package",
)
