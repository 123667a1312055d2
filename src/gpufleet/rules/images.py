"""Container image references: what a container runtime can pull, and what ECS's RegisterTaskDefinition
takes. The spec (every image field of a stack file) and the pack (ECS task definitions, Kubernetes pod
specs of any program) call these two functions.

The grammar is distribution/reference's (regexp.go and reference.go at v0.6.0, ff14fafe), the parser
containerd, Docker and the kubelet use: a name that does not match is never pulled (the kubelet's
InvalidImageName, Docker's "invalid reference format"). ECS's own rule is the API reference's
ContainerDefinition.image.
"""

from __future__ import annotations

import re

from gpufleet.catalog.tokens import UNKNOWN

_ALPHANUMERIC = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALPHANUMERIC}(?:{_SEPARATOR}{_ALPHANUMERIC})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|\[(?:[a-fA-F0-9:]+)\])"
_NAME = rf"(?:{_HOST}(?::[0-9]+)?/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*"
_TAG = r"[0-9A-Za-z_][0-9A-Za-z_.-]{0,127}"  # Go's \w is ASCII
_DIGEST = r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}"
REFERENCE = re.compile(rf"({_NAME})(?::({_TAG}))?(?:@({_DIGEST}))?")
PATH_MAX = 255  # RepositoryNameTotalLengthMax: the path after the domain (reference.go)

# ContainerDefinition.image: "letters (uppercase and lowercase), numbers, hyphens, underscores, colons,
# periods, forward slashes, and number signs (#)", up to 255 before a digest's @.
_ECS_CHARACTERS = re.compile(r"[A-Za-z0-9_:./#-]*(?:@sha256:[0-9A-Fa-f]{64})?")
ECS_MAX = 255


def _quoted(image: str) -> str:
    return repr(image if len(image) <= 80 else image[:77] + "...")


def _path(name: str) -> str:
    """The name without its domain: the first segment is a domain when it has a `.` or `:`, is
    localhost, or has upper case (normalize.go, splitDockerDomain)."""
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost" or first.lower() != first):
        return rest
    return name


def reference_problem(image: object) -> str | None:
    """Is the image a reference a container runtime pulls?"""
    if not isinstance(image, str) or UNKNOWN in image:
        return None  # the shape checks say what kind a field must be; a name known after apply is not judged
    match = REFERENCE.fullmatch(image)
    if match is None:
        return (
            f"image {_quoted(image)} is not an image reference ([registry/]repository[:tag][@digest], lower-case "
            "repository; distribution/reference): the runtime never pulls it"
        )
    if len(_path(match[1])) > PATH_MAX:
        return f"image {_quoted(image)}: its repository path is longer than {PATH_MAX} characters (distribution/reference)"
    return None


def ecs_image_problem(image: object) -> str | None:
    """Does RegisterTaskDefinition take the image, and can the agent pull it?"""
    if not isinstance(image, str) or UNKNOWN in image:
        return None
    if not _ECS_CHARACTERS.fullmatch(image):
        return (
            f"image {_quoted(image)}: RegisterTaskDefinition refuses it (Container.image contains invalid characters); ECS "
            "takes letters, numbers, - _ : . / # and an @sha256: digest"
        )
    if len(image.partition("@")[0]) > ECS_MAX:
        return f"image {_quoted(image)}: ECS takes at most {ECS_MAX} characters before a digest (ContainerDefinition.image)"
    return reference_problem(image)
