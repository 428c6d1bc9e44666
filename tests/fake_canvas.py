"""A small Canvas LMS for tests: a real HTTP server on 127.0.0.1 (a thread of the test
process, serving real sockets) that implements the REST endpoints `abgrade gradebook
publish` calls through canvasapi, with Canvas's pagination (Link headers), bearer-token
checks and the two-step file upload. It records every request, so tests can assert what
was sent (and that a rerun sends nothing)."""

from __future__ import annotations

import email
import email.policy
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

TOKEN = "test-token-0123456789"


@dataclass
class Request:
    method: str
    path: str
    form: dict[str, list[str]]
    authorized: bool


@dataclass
class Course:
    id: int
    assignment: int
    points: float
    students: list[dict[str, Any]]  # id, name, sis_user_id, login_id
    scores: dict[int, float | None] = field(default_factory=dict)
    comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    files: dict[int, dict[str, Any]] = field(default_factory=dict)


class FakeCanvas:
    def __init__(self, course: Course, page_size: int = 2) -> None:
        self.course = course
        self.page_size = page_size  # small, so that pagination is exercised
        self.requests: list[Request] = []
        self.lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeCanvas:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def writes(self) -> list[Request]:
        return [r for r in self.requests if r.method in ("PUT", "POST")]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        canvas = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                pass

            def do_GET(self) -> None:
                self._serve("GET")

            def do_PUT(self) -> None:
                self._serve("PUT")

            def do_POST(self) -> None:
                self._serve("POST")

            def _form(self) -> dict[str, list[str]]:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                kind = self.headers.get("Content-Type", "")
                if kind.startswith("multipart/form-data"):  # the upload's step 2: read with the email parser
                    message = email.message_from_bytes(
                        f"Content-Type: {kind}\r\n\r\n".encode() + body, policy=email.policy.HTTP
                    )
                    form: dict[str, list[str]] = {}
                    for part in message.iter_parts():
                        name = part.get_param("name", header="content-disposition")
                        data = part.get_payload(decode=True) or b""
                        filename = part.get_filename()
                        form[str(name)] = [f"<file {filename} {len(data)} bytes>" if filename else data.decode()]
                    return form
                return parse_qs(body.decode(), keep_blank_values=True)

            def _serve(self, method: str) -> None:
                parts = urlsplit(self.path)
                form = parse_qs(parts.query, keep_blank_values=True)
                if method in ("PUT", "POST"):
                    form.update(self._form())
                authorized = self.headers.get("Authorization") == f"Bearer {TOKEN}"
                with canvas.lock:
                    canvas.requests.append(Request(method, parts.path, form, authorized))
                    status, payload, headers = canvas.answer(method, parts.path, form, authorized, self.headers)
                body = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(body)

        return Handler

    # --- the API -------------------------------------------------------------------

    def answer(self, method: str, path: str, form: dict, authorized: bool, headers: Any) -> tuple[int, Any, dict]:
        course = self.course
        if path == "/files_upload":  # step 2 of an upload: no token (Canvas's upload URL is pre-signed)
            number = len(course.files) + 1
            course.files[number] = {"id": number, "display_name": form.get("filename", [""])[0], "form": form}
            return 201, {"id": number, "url": f"{self.url}/files/{number}", "display_name": "feedback.html"}, {}
        if not authorized:
            return (
                401,
                {"errors": [{"message": "Invalid access token."}]},
                {"WWW-Authenticate": 'Bearer realm="canvas-lms"'},
            )
        base = f"/api/v1/courses/{course.id}"
        assignment = f"{base}/assignments/{course.assignment}"
        if method == "GET" and path == base:
            return 200, {"id": course.id, "name": "Alpha-beta 101"}, {}
        if method == "GET" and path == assignment:
            return (
                200,
                {"id": course.assignment, "name": "Lab 1", "points_possible": course.points, "course_id": course.id},
                {},
            )
        if method == "GET" and path == f"{base}/search_users":  # "List users in course"
            if form.get("enrollment_type[]") != ["student"]:
                return 400, {"errors": [{"message": "expected enrollment_type[]=student"}]}, {}
            return self._page(path, form, course.students)
        if method == "GET" and path == f"{assignment}/submissions":
            rows = [self._submission(s["id"]) for s in course.students]
            return self._page(path, form, rows)
        match = re.fullmatch(rf"{assignment}/submissions/(\d+)(/comments/files)?", path)
        if match:
            user = int(match.group(1))
            if user not in {s["id"] for s in course.students}:
                return 404, {"errors": [{"message": "The specified resource does not exist."}]}, {}
            if method == "GET" and not match.group(2):
                return 200, self._submission(user), {}
            if method == "POST" and match.group(2):
                return 200, {"upload_url": f"{self.url}/files_upload", "upload_params": {"key": f"u{user}"}}, {}
            if method == "PUT" and not match.group(2):
                if "submission[posted_grade]" in form:
                    course.scores[user] = float(form["submission[posted_grade]"][0])
                text = form.get("comment[text_comment]", [None])[0]
                files = form.get("comment[file_ids][]", [])
                if text is not None or files:
                    course.comments.setdefault(user, []).append({"text": text, "files": [int(f) for f in files]})
                return 200, self._submission(user), {}
        return 404, {"errors": [{"message": f"no route {method} {path}"}]}, {}

    def _submission(self, user: int) -> dict[str, Any]:
        score = self.course.scores.get(user)
        return {
            "id": 90000 + user,
            "user_id": user,
            "assignment_id": self.course.assignment,
            "course_id": self.course.id,
            "score": score,
            "grade": None if score is None else f"{score:g}",
            "workflow_state": "graded" if score is not None else "submitted",
        }

    def _page(self, path: str, form: dict, rows: list) -> tuple[int, Any, dict]:
        per_page = min(int(form.get("per_page", ["10"])[0]), self.page_size)
        page = int(form.get("page", ["1"])[0])
        chunk = rows[(page - 1) * per_page : page * per_page]
        links = []
        if page * per_page < len(rows):
            query = "&".join(f"{k}={v}" for k, values in form.items() if k != "page" for v in values)
            links.append(f'<{self.url}{path}?{query}&page={page + 1}>; rel="next"')
        return 200, chunk, ({"Link": ", ".join(links)} if links else {})
