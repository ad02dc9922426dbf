"""google-cloud-storage (the official Python client, from PyPI) against Trainyard's Cloud Storage
API, reached both ways users point it elsewhere: STORAGE_EMULATOR_HOST, and client_options'
api_endpoint with anonymous credentials. Bucket create, a 20 MiB resumable upload in 8 MiB chunks
and its download checked by the client's own crc32c/md5 validation, small multipart uploads,
listing with prefix/delimiter and pagination, metadata, generation preconditions, copy, compose,
delete, and the client's exceptions for a missing object and a failed precondition."""

import base64
import hashlib
import os
import unittest

from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage

from harness import Server

MIB = 1024 * 1024


class StorageClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server(["--executor", "fake"])

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    def client(self):
        return storage.Client(project="test-project", credentials=AnonymousCredentials(),
                              client_options={"api_endpoint": self.server.endpoint})

    def test_emulator_host_upload_download_list(self):
        os.environ["STORAGE_EMULATOR_HOST"] = self.server.endpoint
        try:
            client = storage.Client(project="test-project")
        finally:
            del os.environ["STORAGE_EMULATOR_HOST"]
        bucket = client.create_bucket("py-bucket")
        data = os.urandom(20 * MIB)
        blob = bucket.blob("data/big.bin", chunk_size=8 * MIB)
        blob.metadata = {"origin": "python"}
        blob.upload_from_string(data, content_type="application/x-test")
        self.assertEqual(blob.size, len(data))
        self.assertEqual(blob.md5_hash, base64.b64encode(hashlib.md5(data).digest()).decode())
        with open(os.path.join(self.server.buckets, "py-bucket", "data", "big.bin"), "rb") as f:
            self.assertEqual(f.read(), data, "the object is the plain file under the bucket root")
        # The client checks what it downloads against x-goog-hash (crc32c by default, then md5).
        for checksum in ("crc32c", "md5"):
            self.assertEqual(bucket.blob("data/big.bin").download_as_bytes(checksum=checksum), data)
        self.assertEqual(bucket.blob("data/big.bin").download_as_bytes(start=5, end=9), data[5:10])

        bucket.blob("data/small.txt").upload_from_string("hello world", content_type="text/plain")
        bucket.blob("top.txt").upload_from_string("top")
        meta = bucket.get_blob("data/big.bin")
        self.assertEqual(meta.content_type, "application/x-test")
        self.assertEqual(meta.metadata, {"origin": "python"})

        listed = client.list_blobs("py-bucket", prefix="data/", delimiter="/")
        self.assertEqual([b.name for b in listed], ["data/big.bin", "data/small.txt"])
        top = client.list_blobs("py-bucket", delimiter="/")
        self.assertEqual([b.name for b in top], ["top.txt"])
        self.assertEqual(top.prefixes, {"data/"})
        pages = client.list_blobs("py-bucket", max_results=None, page_size=1).pages
        self.assertEqual([[b.name for b in page] for page in pages],
                         [["data/big.bin"], ["data/small.txt"], ["top.txt"]])

    def test_preconditions_copy_compose_delete_and_errors(self):
        client = self.client()
        bucket = client.create_bucket("py-ops")
        first = bucket.blob("a.txt")
        first.upload_from_string("one")
        generation = first.generation
        self.assertTrue(generation)
        with self.assertRaises(exceptions.PreconditionFailed):
            bucket.blob("a.txt").upload_from_string("two", if_generation_match=0)
        with self.assertRaises(exceptions.PreconditionFailed):
            bucket.blob("a.txt").upload_from_string("two", if_generation_match=generation + 1)
        bucket.blob("a.txt").upload_from_string("two", if_generation_match=generation)
        self.assertEqual(bucket.blob("a.txt").download_as_text(), "two")

        bucket.blob("b.txt").upload_from_string("-three")
        copied = bucket.copy_blob(bucket.blob("a.txt"), client.bucket("py-ops"), "c.txt")
        self.assertEqual(copied.download_as_text(), "two")
        composed = bucket.blob("ab.txt")
        composed.compose([bucket.blob("a.txt"), bucket.blob("b.txt")])
        self.assertEqual(bucket.blob("ab.txt").download_as_text(), "two-three")

        bucket.blob("c.txt").delete()
        self.assertFalse(bucket.blob("c.txt").exists())
        with self.assertRaises(exceptions.NotFound):
            bucket.blob("c.txt").download_as_bytes()
        with self.assertRaises(exceptions.NotFound):
            client.get_bucket("no-such-bucket")
        with self.assertRaises(exceptions.Conflict):
            client.create_bucket("py-ops")


if __name__ == "__main__":
    unittest.main(verbosity=2)
