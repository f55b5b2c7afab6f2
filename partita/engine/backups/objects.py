"""Where exports are written and imports read: a local directory or an S3-compatible service.

Export and import code sees one small interface (`Objects`): stream an
object out (`upload`), put a small one (`put`), list keys under a prefix in
S3's order, open one as a byte stream, delete some. `Directory` maps
`s3://bucket/key` to `DIR/bucket/key` (`--s3-dir`); `S3` talks to a real
service through boto3 (`--s3-endpoint`), with multipart uploads for large
objects and streamed reads, so neither side ever holds a whole object in
memory. Failures of either come out as `ObjectError` carrying S3's error code
(`NoSuchBucket`, `AccessDenied`, ...), which the jobs map to DynamoDB's
FailureCode.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import io
import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import zstandard

#: S3's smallest part but the last: the memory one upload holds before it sends a part.
PART_BYTES = 5 * 1024 * 1024


class ObjectError(Exception):
    """A failed object operation, with S3's error code and message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Placement:
    """The request's S3 options that S3 itself enforces (bucket owner, server-side encryption)."""

    owner: str | None = None
    sse: str | None = None
    kms_key: str | None = None


@dataclass
class Stored:
    """What a finished object reports for manifest-files.json: S3's ETag and the base64 MD5 of its bytes."""

    etag: str
    md5: str
    size: int


class Upload(Protocol):
    def write(self, data: bytes) -> None: ...

    def finish(self) -> Stored: ...

    def abort(self) -> None: ...


class Objects(Protocol):
    def upload(self, bucket: str, key: str, placement: Placement) -> Upload: ...

    def put(self, bucket: str, key: str, data: bytes, placement: Placement) -> Stored: ...

    def keys(self, bucket: str, prefix: str, owner: str | None) -> Iterator[str]: ...

    def open(self, bucket: str, key: str, owner: str | None) -> IO[bytes]: ...

    def delete(self, bucket: str, keys: list[str], owner: str | None) -> None: ...


def put_all(upload: Upload, data: bytes) -> Stored:
    upload.write(data)
    return upload.finish()


# -- a local directory (--s3-dir) ------------------------------------------------------------


class _FileUpload:
    """Written to a private file beside the buckets, renamed into place when complete.

    So a reader never sees half an object, and two workers that both start
    the same data file (the duty moves between processes) never write into
    one file: the first to finish renames its own, the other discards its own.
    """

    def __init__(self, path: Path, partial: Path) -> None:
        partial.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._partial = partial / f"{secrets.token_hex(8)}.partial"
        self._file = self._partial.open("wb")
        self._md5 = hashlib.md5()  # noqa: S324 - S3's own checksum
        self._size = 0

    def write(self, data: bytes) -> None:
        self._file.write(data)
        self._md5.update(data)
        self._size += len(data)

    def finish(self) -> Stored:
        self._file.close()
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self._partial, self._path)
        except OSError as error:
            raise ObjectError("AccessDenied", str(error)) from error
        return Stored(self._md5.hexdigest(), base64.b64encode(self._md5.digest()).decode(), self._size)

    def abort(self) -> None:
        self._file.close()
        self._partial.unlink(missing_ok=True)


class Directory:
    """`s3://bucket/key` is `root/bucket/key`; a bucket folder is made on first write (no bucket errors).

    Objects being written live in `root/.partial` (no bucket can be named so:
    S3 names start with a letter or digit); files a crashed process left
    there more than an hour ago are removed when a server starts.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._partial = root / ".partial"
        cutoff = time.time() - 3600  # file ages are wall-clock facts, not the server clock's business
        for stale in self._partial.glob("*.partial") if self._partial.is_dir() else ():
            with contextlib.suppress(OSError):
                if stale.stat().st_mtime < cutoff:
                    stale.unlink()

    def path(self, bucket: str, key: str) -> Path:
        """Refuses keys that climb out of the bucket (`..`), as they would name another bucket's files."""
        base = (self.root / bucket).resolve()
        path = (base / key).resolve()
        if path != base and not str(path).startswith(str(base) + os.sep):
            raise ObjectError("InvalidArgument", "key outside the bucket")
        return path

    def upload(self, bucket: str, key: str, placement: Placement) -> Upload:
        try:
            return _FileUpload(self.path(bucket, key), self._partial)
        except OSError as error:
            raise ObjectError("AccessDenied", str(error)) from error

    def put(self, bucket: str, key: str, data: bytes, placement: Placement) -> Stored:
        return put_all(self.upload(bucket, key, placement), data)

    def keys(self, bucket: str, prefix: str, owner: str | None) -> Iterator[str]:
        base = (self.root / bucket).resolve()
        if not base.is_dir():
            raise ObjectError("NoSuchBucket", "The specified bucket does not exist")
        # Only the folders the prefix can reach are walked; keys come out in S3's (byte) order.
        folder = self.path(bucket, prefix.rsplit("/", 1)[0]) if "/" in prefix else base
        if not folder.is_dir():
            return iter(())
        found = (str(p.relative_to(base)).replace(os.sep, "/") for p in folder.rglob("*") if p.is_file())
        return iter(sorted((k for k in found if k.startswith(prefix)), key=lambda k: k.encode()))

    def open(self, bucket: str, key: str, owner: str | None) -> IO[bytes]:
        try:
            return self.path(bucket, key).open("rb")
        except FileNotFoundError as error:
            raise ObjectError("NoSuchKey", "The specified key does not exist.") from error

    def delete(self, bucket: str, keys: list[str], owner: str | None) -> None:
        for key in keys:
            self.path(bucket, key).unlink(missing_ok=True)


# -- an S3-compatible service (--s3-endpoint) ----------------------------------------------------


def _failure(error: Exception) -> ObjectError:
    from botocore.exceptions import ClientError

    if isinstance(error, ClientError):
        detail = error.response.get("Error", {})
        code = str(detail.get("Code") or "Unknown")
        if code in ("404", "NotFound"):
            code = "NoSuchKey"
        elif code == "403":
            code = "AccessDenied"
        return ObjectError(code, str(detail.get("Message") or error))
    return ObjectError("ServiceUnavailable", str(error))  # no connection, no credentials, a timeout


class _Body(io.RawIOBase):
    """A botocore StreamingBody as a raw stream, so io.BufferedReader can read it by lines."""

    def __init__(self, body: Any) -> None:
        self._body = body

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        try:
            data = self._body.read(len(buffer))
        except Exception as error:  # a dropped connection mid-object: one unreadable object to the import
            raise OSError(str(error)) from error
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self._body.close()
        super().close()


class _S3Upload:
    """Parts of PART_BYTES as they fill (a multipart upload), or one PutObject if the object stays small."""

    def __init__(self, client: Any, bucket: str, key: str, placement: Placement) -> None:
        self._client, self._bucket, self._key = client, bucket, key
        self._owner = {"ExpectedBucketOwner": placement.owner} if placement.owner else {}
        self._extra: dict[str, str] = dict(self._owner)
        if placement.sse == "KMS":
            self._extra["ServerSideEncryption"] = "aws:kms"
            if placement.kms_key:
                self._extra["SSEKMSKeyId"] = placement.kms_key
        elif placement.sse:
            self._extra["ServerSideEncryption"] = "AES256"
        self._buffer = bytearray()
        self._parts: list[dict[str, Any]] = []
        self._upload_id: str | None = None
        self._md5 = hashlib.md5()  # noqa: S324 - S3's own checksum
        self._size = 0

    def _call(self, name: str, **kwargs: Any) -> Any:
        try:
            return getattr(self._client, name)(Bucket=self._bucket, Key=self._key, **kwargs)
        except Exception as error:
            raise _failure(error) from error

    def _send_part(self) -> None:
        if self._upload_id is None:
            self._upload_id = self._call("create_multipart_upload", **self._extra)["UploadId"]
        number = len(self._parts) + 1
        out = self._call("upload_part", UploadId=self._upload_id, PartNumber=number, Body=bytes(self._buffer),
                         **self._owner)
        self._parts.append({"ETag": out["ETag"], "PartNumber": number})
        self._buffer.clear()

    def write(self, data: bytes) -> None:
        self._buffer += data
        self._md5.update(data)
        self._size += len(data)
        if len(self._buffer) >= PART_BYTES:
            self._send_part()

    def finish(self) -> Stored:
        if self._upload_id is None:
            out = self._call("put_object", Body=bytes(self._buffer), **self._extra)
        else:
            if self._buffer:
                self._send_part()
            out = self._call("complete_multipart_upload", UploadId=self._upload_id,
                             MultipartUpload={"Parts": self._parts}, **self._owner)
        self._buffer = bytearray()
        return Stored(str(out["ETag"]).strip('"'), base64.b64encode(self._md5.digest()).decode(), self._size)

    def abort(self) -> None:
        if self._upload_id is not None:
            try:
                self._call("abort_multipart_upload", UploadId=self._upload_id, **self._owner)
            except ObjectError:
                pass  # the service drops abandoned uploads by its own lifecycle rules
            self._upload_id = None


class S3:
    """boto3's S3 client on the endpoint; credentials come from the standard AWS chain."""

    def __init__(self, endpoint: str, region: str | None, path_style: bool = True) -> None:
        self.endpoint = endpoint
        self._region = region
        self._path_style = path_style
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:  # made on first use: a server that never exports needs no credentials
            import boto3
            from botocore.config import Config

            config = Config(s3={"addressing_style": "path" if self._path_style else "virtual"},
                            retries={"max_attempts": 3, "mode": "standard"})
            session = boto3.session.Session()
            self._client = session.client("s3", endpoint_url=self.endpoint,
                                          region_name=self._region or session.region_name or "us-east-1", config=config)
        return self._client

    def upload(self, bucket: str, key: str, placement: Placement) -> Upload:
        return _S3Upload(self.client, bucket, key, placement)

    def put(self, bucket: str, key: str, data: bytes, placement: Placement) -> Stored:
        return put_all(self.upload(bucket, key, placement), data)

    def keys(self, bucket: str, prefix: str, owner: str | None) -> Iterator[str]:
        extra = {"ExpectedBucketOwner": owner} if owner else {}
        try:
            pages = self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix, **extra)
            for page in pages:
                for entry in page.get("Contents", []):
                    yield entry["Key"]
        except ObjectError:
            raise
        except Exception as error:
            raise _failure(error) from error

    def open(self, bucket: str, key: str, owner: str | None) -> IO[bytes]:
        extra = {"ExpectedBucketOwner": owner} if owner else {}
        try:
            body = self.client.get_object(Bucket=bucket, Key=key, **extra)["Body"]
        except Exception as error:
            raise _failure(error) from error
        return io.BufferedReader(_Body(body), 1 << 16)

    def delete(self, bucket: str, keys: list[str], owner: str | None) -> None:
        extra = {"ExpectedBucketOwner": owner} if owner else {}
        for start in range(0, len(keys), 1000):
            chunk = [{"Key": k} for k in keys[start:start + 1000]]
            try:
                self.client.delete_objects(Bucket=bucket, Delete={"Objects": chunk, "Quiet": True}, **extra)
            except Exception as error:
                raise _failure(error) from error


def decompressed(raw: IO[bytes], compression: str) -> IO[bytes]:
    """An S3 object's bytes as written before `InputCompressionType` (GZIP, ZSTD or NONE) packed them.

    Shared by imports and bulk puts, which read the same S3 layouts.
    """
    if compression == "GZIP":
        return gzip.open(raw)  # type: ignore[return-value]
    if compression == "ZSTD":
        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(raw))  # type: ignore[arg-type]
    return raw
