"""Invite tokens and logged-in sessions. A token is shown once when it is created; only its
SHA-256 is stored, so a copy of the database cannot be used to log in."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import Engine, delete, insert, select, update

from voxeval.raters.database import retrying, transaction, utcnow
from voxeval.raters.schema import accounts_table, sessions_table

Role = Literal["rater", "admin"]
TOKEN_BYTES = 24  # 32 URL-safe characters


@dataclass(frozen=True)
class Invite:
    rater_id: str
    role: Role
    token: str  # shown once; never stored


@dataclass(frozen=True)
class SessionInfo:
    session_id: str
    study_id: str
    rater_id: str
    role: Role
    csrf_token: str
    trained: bool


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def create_invites(
    engine: Engine, study_id: str, count: int, *, role: Role = "rater", label: str | None = None
) -> list[Invite]:
    """``count`` new accounts with fresh tokens (all in one transaction)."""
    if count < 1:
        raise ValueError("count must be at least 1")
    invites = [
        Invite(f"{role}-{secrets.token_hex(4)}", role, secrets.token_urlsafe(TOKEN_BYTES))
        for _ in range(count)
    ]
    now = utcnow()

    def work() -> None:
        with transaction(engine) as conn:
            for invite in invites:
                conn.execute(
                    insert(accounts_table).values(
                        study_id=study_id,
                        rater_id=invite.rater_id,
                        role=invite.role,
                        token_sha256=token_hash(invite.token),
                        label=label,
                        created_at=now,
                        disabled=False,
                    )
                )

    retrying(work)
    return invites


def open_session(engine: Engine, study_id: str, token: str) -> SessionInfo | None:
    """A new session for the account holding ``token``; None when no enabled account does."""
    if not token or len(token) > 200:
        return None
    digest = token_hash(token.strip())

    def work() -> SessionInfo | None:
        with transaction(engine) as conn:
            account = conn.execute(
                select(accounts_table)
                .where(accounts_table.c.study_id == study_id)
                .where(accounts_table.c.token_sha256 == digest)
            ).first()
            if account is None or account.disabled:
                return None
            session_id = secrets.token_urlsafe(32)
            csrf = secrets.token_urlsafe(32)
            conn.execute(
                insert(sessions_table).values(
                    session_id=session_id,
                    study_id=study_id,
                    rater_id=account.rater_id,
                    csrf_token=csrf,
                    created_at=utcnow(),
                )
            )
            return SessionInfo(
                session_id,
                study_id,
                account.rater_id,
                account.role,
                csrf,
                account.trained_at is not None,
            )

    return retrying(work)


def load_session(engine: Engine, study_id: str, session_id: str | None) -> SessionInfo | None:
    if not session_id or len(session_id) > 64:
        return None

    def work() -> SessionInfo | None:
        with transaction(engine) as conn:
            row = conn.execute(
                select(sessions_table, accounts_table.c.role, accounts_table.c.trained_at)
                .join(
                    accounts_table,
                    (accounts_table.c.study_id == sessions_table.c.study_id)
                    & (accounts_table.c.rater_id == sessions_table.c.rater_id),
                )
                .where(sessions_table.c.session_id == session_id)
                .where(sessions_table.c.study_id == study_id)
                .where(accounts_table.c.disabled.is_(False))
            ).first()
        if row is None:
            return None
        return SessionInfo(
            row.session_id,
            row.study_id,
            row.rater_id,
            row.role,
            row.csrf_token,
            row.trained_at is not None,
        )

    return retrying(work)


def close_session(engine: Engine, session_id: str) -> None:
    def work() -> None:
        with transaction(engine) as conn:
            conn.execute(delete(sessions_table).where(sessions_table.c.session_id == session_id))

    retrying(work)


def mark_trained(engine: Engine, study_id: str, rater_id: str) -> None:
    def work() -> None:
        with transaction(engine) as conn:
            conn.execute(
                update(accounts_table)
                .where(accounts_table.c.study_id == study_id)
                .where(accounts_table.c.rater_id == rater_id)
                .where(accounts_table.c.trained_at.is_(None))
                .values(trained_at=utcnow())
            )

    retrying(work)
